// JsonInput: reading a JSON input file (traces, harness measurements, Chakra communicator
// groups) so that no content can crash or hang the reader: every failure of the parser (bad
// syntax, a number outside double's range such as 1e999, nesting deeper than any input of ours
// needs) is an InputError naming the file and the line; and values quoted in error messages are
// described briefly (a scalar as written, a container by its size), never serialised whole (a
// deeply nested value's dump() recursed until the stack overflowed).
// Leaves out: limits on the file's size (the callers read what they are given).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim {

class JsonInput {
 public:
  /// Deepest nesting accepted: a fabricsim trace nests 5 levels, harness files 4.
  static constexpr int kMaxDepth = 64;
  /// Parses `text`, read from `file`: the document, or an InputError (file, line, what failed).
  static nlohmann::json parse(const std::string& text, const std::string& file);
  /// A value for an error message: a scalar as JSON (a string cut at 40 characters), an array or
  /// object by its size ("an array of 3 values").
  static std::string brief(const nlohmann::json& j);
  /// The 1-based line of byte offset `byte` in `text`.
  static int lineAt(const std::string& text, size_t byte);
};

}  // namespace fabricsim
