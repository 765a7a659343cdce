// YamlReader: typed, validating access to a parsed YAML document that collects diagnostics.
//
// Models: a walk over a YAML::Node tree in which every getter knows the dotted key path it
// reads ("links.host_speed", "failures[2].at") and the line and column of the value
// (YAML::Node::Mark()), checks the value's type, range or unit, and records a Diagnostic on
// failure instead of stopping, so that every problem in a file is reported at once. Keys a
// map must not contain are reported by checkKeys(). Values that came from a `--set`
// override have no line in the file; their diagnostics say which --set gave them.
// With a Schema (useSchema), read() takes a key's type, range, choices and whether it is
// required from the schema, and checkKeys(map, path) the keys a map may hold, under the
// conditions the document meets (topology.kind: fat-tree); the loaders keep only the rules
// that relate keys. An unknown key is answered with the nearest allowed one ("did you mean").
// Leaves out: YAML syntax errors (the loaders turn YAML::ParserException into an InputError).
// Units: Time in ps, Bytes, BitRate in bit/s, as parsed by sim/core/Units.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/config/Schema.h"
#include "sim/core/Error.h"
#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

class YamlReader {
 public:
  /// `file` is the name used in diagnostics.
  explicit YamlReader(std::string file);

  const std::string& file() const { return file_; }

  /// Records that the value at `keyPath` (and everything below it) was given by
  /// `--set assignment` rather than read from the file.
  void addOverride(std::string keyPath, std::string assignment);

  /// Records a problem with the value `at` (its mark gives line and column) at key `path`.
  void error(const YAML::Node& at, const std::string& path, const std::string& message);
  /// Records a problem at an explicit 1-based line and column (0 = unknown).
  void errorAt(int line, int column, const std::string& path, const std::string& message);

  bool hasErrors() const { return !diags_.empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  /// Throws InputError with every diagnostic collected so far, if there is any.
  void throwIfErrors() const;

  /// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
  static std::string join(const std::string& path, std::string_view key);
  /// "failures" + 2 -> "failures[2]".
  static std::string index(const std::string& path, size_t i);
  /// 1-based line of a node, 0 when unknown.
  static int lineOf(const YAML::Node& n);
  /// A short description of what a node holds, for "found ..." messages.
  static std::string describe(const YAML::Node& n);

  /// True if `node` is a map; otherwise reports "expected a map" at `path` and returns false.
  bool expectMap(const YAML::Node& node, const std::string& path);
  /// True if `node` is a sequence; otherwise reports and returns false.
  bool expectSequence(const YAML::Node& node, const std::string& path);
  /// Reports every key of `map` that is not in `allowed`, naming the allowed keys.
  void checkKeys(const YAML::Node& map, const std::string& path,
                 std::initializer_list<std::string_view> allowed);
  /// Reports every key of `map` that the schema does not allow at `path` (useSchema first).
  void checkKeys(const YAML::Node& map, const std::string& path);
  /// The node at map[key] if present, else the map itself (where a diagnostic about a value that
  /// came from a preset or a default points).
  static YAML::Node valueOr(const YAML::Node& map, const char* key);
  /// True if `map` (a map) has `key`.
  static bool has(const YAML::Node& map, std::string_view key);
  /// Reports `key` under `path` as missing (at the map's position) if it is absent.
  bool require(const YAML::Node& map, const std::string& path, std::string_view key);

  // ---- typed getters on map[key] ----
  // Each returns true and sets `out` when the key is present and valid. When the key is absent it
  // leaves `out` unchanged and returns false (reporting it as missing if `required`). When the
  // value is invalid it records a diagnostic, leaves `out` unchanged and returns false.

  bool getInt(const YAML::Node& map, const std::string& path, std::string_view key, int& out, int64_t min,
              int64_t max, bool required = false);
  bool getUint64(const YAML::Node& map, const std::string& path, std::string_view key, uint64_t& out,
                 bool required = false);
  bool getBool(const YAML::Node& map, const std::string& path, std::string_view key, bool& out,
               bool required = false);
  bool getString(const YAML::Node& map, const std::string& path, std::string_view key, std::string& out,
                 bool required = false);
  /// A duration with a unit ("1.5us"); must be >= min.
  bool getTime(const YAML::Node& map, const std::string& path, std::string_view key, Time& out,
               Time min = Time::zero(), bool required = false);

  // ---- getters driven by the schema (useSchema first) ----
  /// Checks keys and values against `schema`. `root` is the whole document: the values of its
  /// keys decide which conditional keys exist (a `when` on a key whose value is missing or not
  /// one of its choices holds, so that one bad `kind` does not make every sibling unknown).
  void useSchema(const Schema& schema, const YAML::Node& root);
  /// Whether a key must be present: as the schema says, or as the loader decides for keys that
  /// are required only with some value of another (ecn.kmin when ecn is enabled).
  enum class Need { Schema, Required, Optional };
  // Like the getters above, with the type, range, choices and `required` of the key's schema
  // entry; a key missing from the schema, or of another type, is an internal error.
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, int& out,
            Need need = Need::Schema);
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, uint64_t& out,
            Need need = Need::Schema);
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, double& out,
            Need need = Need::Schema);
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, bool& out,
            Need need = Need::Schema);
  /// A String or a Choice key.
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, std::string& out,
            Need need = Need::Schema);
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, Time& out,
            Need need = Need::Schema);
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, Bytes& out,
            Need need = Need::Schema);
  bool read(const YAML::Node& map, const std::string& path, std::string_view key, BitRate& out,
            Need need = Need::Schema);

  // ---- typed conversions of a value node (e.g. a list element) ----
  bool asInt(const YAML::Node& v, const std::string& path, int64_t& out, int64_t min, int64_t max);
  bool asDouble(const YAML::Node& v, const std::string& path, double& out, double min, double max);
  bool asString(const YAML::Node& v, const std::string& path, std::string& out);
  bool asTime(const YAML::Node& v, const std::string& path, Time& out, Time min = Time::zero());
  bool asBytes(const YAML::Node& v, const std::string& path, Bytes& out, bool allowBare, Bytes min);
  bool asRate(const YAML::Node& v, const std::string& path, BitRate& out);

 private:
  /// The --set assignment that produced `path`, or nullptr.
  const std::string* overrideFor(const std::string& path) const;
  /// The scalar text of `v`, or reports `expected` and returns false.
  bool scalar(const YAML::Node& v, const std::string& path, const char* expected, std::string& out);

  /// The schema entry of `path`.`key`, checked to be of one of `types`.
  const KeySpec& entry(const std::string& path, std::string_view key,
                       std::initializer_list<KeyType> types) const;
  /// Present (and, if required, reported missing otherwise).
  bool present(const YAML::Node& map, const std::string& path, std::string_view key, const KeySpec& k,
               Need need);
  /// Reports `found` at `path` if `x` is outside the entry's range; true when inside.
  bool inRange(const YAML::Node& v, const std::string& path, const KeySpec& k, double x,
               const std::string& what, const std::string& found);
  /// Reports duplicate keys of `map` and keys not in `allowed` (naming the nearest allowed one).
  void checkKeysIn(const YAML::Node& map, const std::string& path, const std::vector<std::string>& allowed);

  /// The `when` conditions of the schema that the document meets (computed once per document).
  const std::vector<std::string>& holdingConditions() const;

  std::string file_;
  const Schema* schema_ = nullptr;
  YAML::Node root_;
  mutable std::optional<std::vector<std::string>> holding_;
  std::vector<std::pair<std::string, std::string>> overrides_;  // key path, assignment
  std::vector<Diagnostic> diags_;
};

}  // namespace fabricsim
