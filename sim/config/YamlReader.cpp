#include "sim/config/YamlReader.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace fabricsim {
namespace {

template <class Range>
std::string choicesText(const Range& choices) {
  std::string out;
  for (auto c : choices) {
    if (!out.empty()) out += " | ";
    out += c;
  }
  return out;
}

/// Levenshtein distance, for "did you mean".
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// The allowed key nearest to `name` if it is near enough to be a typo of it (at most one edit
/// per three characters, at least one), else "".
std::string nearest(const std::string& name, const std::vector<std::string>& allowed) {
  std::string best;
  size_t bestD = std::max<size_t>(1, name.size() / 3) + 1;
  for (const auto& a : allowed) {
    const size_t d = editDistance(name, a);
    if (d < bestD) {
      bestD = d;
      best = a;
    }
  }
  return best;
}

std::string numberText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

YamlReader::YamlReader(std::string file) : file_(std::move(file)) {}

void YamlReader::addOverride(std::string keyPath, std::string assignment) {
  overrides_.emplace_back(std::move(keyPath), std::move(assignment));
}

const std::string* YamlReader::overrideFor(const std::string& path) const {
  // The last --set wins, as it does when the overrides are applied.
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
    const std::string& k = it->first;
    if (path.size() < k.size() || path.compare(0, k.size(), k) != 0) continue;
    if (path.size() == k.size() || path[k.size()] == '.' || path[k.size()] == '[') return &it->second;
  }
  return nullptr;
}

void YamlReader::error(const YAML::Node& at, const std::string& path, const std::string& message) {
  if (const std::string* a = overrideFor(path)) {
    errorAt(0, 0, path, message + " (given by --set '" + *a + "')");
    return;
  }
  int line = 0;
  int column = 0;
  if (at.IsDefined()) {
    const YAML::Mark m = at.Mark();
    if (!m.is_null() && m.line >= 0) {
      line = m.line + 1;
      column = m.column + 1;
    }
  }
  errorAt(line, column, path, message);
}

void YamlReader::errorAt(int line, int column, const std::string& path, const std::string& message) {
  diags_.push_back(Diagnostic{file_, line, column, path, message});
}

void YamlReader::throwIfErrors() const {
  if (diags_.empty()) return;
  // Report in file order; problems without a line (e.g. from --set) come last.
  std::vector<Diagnostic> sorted = diags_;
  const auto key = [](const Diagnostic& d) {
    return std::make_pair(d.line > 0 ? d.line : INT32_MAX, d.column);
  };
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) { return key(a) < key(b); });
  throw InputError(std::move(sorted));
}

std::string YamlReader::join(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string out = path;
  out += '.';
  out += key;
  return out;
}

std::string YamlReader::index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

int YamlReader::lineOf(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  const YAML::Mark m = n.Mark();
  return (m.is_null() || m.line < 0) ? 0 : m.line + 1;
}

std::string YamlReader::describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "'" + n.Scalar() + "'";
}

bool YamlReader::expectMap(const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) return true;
  error(node, path, "expected a map of keys, found " + describe(node));
  return false;
}

bool YamlReader::expectSequence(const YAML::Node& node, const std::string& path) {
  if (node.IsSequence()) return true;
  error(node, path, "expected a list, found " + describe(node));
  return false;
}

void YamlReader::checkKeys(const YAML::Node& map, const std::string& path,
                           std::initializer_list<std::string_view> allowed) {
  checkKeysIn(map, path, std::vector<std::string>(allowed.begin(), allowed.end()));
}

void YamlReader::checkKeys(const YAML::Node& map, const std::string& path) {
  SIM_CHECK(schema_ != nullptr, "checkKeys(map, path) without a schema");
  checkKeysIn(map, path, schema_->children(path, holdingConditions()));
}

void YamlReader::checkKeysIn(const YAML::Node& map, const std::string& path,
                             const std::vector<std::string>& allowed) {
  if (!map.IsMap()) return;
  std::vector<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: yaml-cpp's operator-> returns a temporary
    const std::string name = k.IsScalar() ? k.Scalar() : std::string("<non-scalar key>");
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      error(k, join(path, name), "duplicate key '" + name + "'");
      continue;
    }
    seen.push_back(name);
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    const std::string guess = nearest(name, allowed);
    error(k, join(path, name),
          "unknown key '" + name + "'" + (path.empty() ? std::string() : " in '" + path + "'") +
              (guess.empty() ? std::string() : " (did you mean '" + guess + "'?)") +
              "; expected one of: " + choicesText(allowed));
  }
}

YAML::Node YamlReader::valueOr(const YAML::Node& map, const char* key) {
  return has(map, key) ? map[key] : map;
}

bool YamlReader::has(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return false;
  return map[std::string(key)].IsDefined();
}

bool YamlReader::require(const YAML::Node& map, const std::string& path, std::string_view key) {
  if (has(map, key)) return true;
  error(map, join(path, key), "missing required key '" + std::string(key) + "'");
  return false;
}

bool YamlReader::scalar(const YAML::Node& v, const std::string& path, const char* expected,
                        std::string& out) {
  if (!v.IsScalar()) {
    error(v, path, std::string("expected ") + expected + ", found " + describe(v));
    return false;
  }
  out = v.Scalar();
  return true;
}

bool YamlReader::asInt(const YAML::Node& v, const std::string& path, int64_t& out, int64_t min, int64_t max) {
  std::string s;
  if (!scalar(v, path, "an integer", s)) return false;
  int64_t x = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  const auto r = std::from_chars(b, e, x);
  if (r.ec != std::errc() || r.ptr != e || b == e) {
    error(v, path, "expected an integer, found '" + s + "'");
    return false;
  }
  if (x < min || x > max) {
    std::string range = "an integer >= " + std::to_string(min);
    if (max < INT64_MAX) range += " and <= " + std::to_string(max);
    error(v, path, "expected " + range + ", found " + s);
    return false;
  }
  out = x;
  return true;
}

bool YamlReader::asDouble(const YAML::Node& v, const std::string& path, double& out, double min, double max) {
  std::string s;
  if (!scalar(v, path, "a number", s)) return false;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(x)) {
    error(v, path, "expected a number, found '" + s + "'");
    return false;
  }
  if (x < min || x > max) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "expected a number between %g and %g, found %s", min, max, s.c_str());
    error(v, path, buf);
    return false;
  }
  out = x;
  return true;
}

bool YamlReader::asString(const YAML::Node& v, const std::string& path, std::string& out) {
  std::string s;
  if (!scalar(v, path, "a string", s)) return false;
  if (s.empty()) {
    error(v, path, "expected a non-empty string, found an empty one");
    return false;
  }
  out = s;
  return true;
}

bool YamlReader::asTime(const YAML::Node& v, const std::string& path, Time& out, Time min) {
  std::string s;
  if (!scalar(v, path, "a duration with a unit, e.g. '1.5us'", s)) return false;
  const auto p = parseTime(s);
  if (!p.value) {
    error(v, path, p.error);
    return false;
  }
  if (*p.value < min) {
    error(v, path, "expected a duration of at least " + formatTime(min) + ", found '" + s + "'");
    return false;
  }
  out = *p.value;
  return true;
}

bool YamlReader::asBytes(const YAML::Node& v, const std::string& path, Bytes& out, bool allowBare,
                         Bytes min) {
  std::string s;
  if (!scalar(v, path, "a size with a unit, e.g. '32MiB'", s)) return false;
  const auto p = parseBytes(s, allowBare);
  if (!p.value) {
    error(v, path, p.error);
    return false;
  }
  if (*p.value < min) {
    error(v, path, "expected a size of at least " + std::to_string(min) + " bytes, found '" + s + "'");
    return false;
  }
  out = *p.value;
  return true;
}

bool YamlReader::asRate(const YAML::Node& v, const std::string& path, BitRate& out) {
  std::string s;
  if (!scalar(v, path, "a rate with a unit, e.g. '400Gbps'", s)) return false;
  const auto p = parseBitRate(s);
  if (!p.value) {
    error(v, path, p.error);
    return false;
  }
  out = *p.value;
  return true;
}

bool YamlReader::getInt(const YAML::Node& map, const std::string& path, std::string_view key, int& out,
                        int64_t min, int64_t max, bool required) {
  if (!(required ? require(map, path, key) : has(map, key))) return false;
  int64_t x = 0;
  if (max > INT32_MAX) max = INT32_MAX;
  if (!asInt(map[std::string(key)], join(path, key), x, min, max)) return false;
  out = static_cast<int>(x);
  return true;
}

bool YamlReader::getUint64(const YAML::Node& map, const std::string& path, std::string_view key,
                           uint64_t& out, bool required) {
  if (!(required ? require(map, path, key) : has(map, key))) return false;
  int64_t x = 0;
  if (!asInt(map[std::string(key)], join(path, key), x, 0, INT64_MAX)) return false;
  out = static_cast<uint64_t>(x);
  return true;
}

bool YamlReader::getBool(const YAML::Node& map, const std::string& path, std::string_view key, bool& out,
                         bool required) {
  if (!(required ? require(map, path, key) : has(map, key))) return false;
  const YAML::Node v = map[std::string(key)];
  bool b = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b)) {
    error(v, join(path, key), "expected true or false, found " + describe(v));
    return false;
  }
  out = b;
  return true;
}

bool YamlReader::getString(const YAML::Node& map, const std::string& path, std::string_view key,
                           std::string& out, bool required) {
  if (!(required ? require(map, path, key) : has(map, key))) return false;
  return asString(map[std::string(key)], join(path, key), out);
}

bool YamlReader::getTime(const YAML::Node& map, const std::string& path, std::string_view key, Time& out,
                         Time min, bool required) {
  if (!(required ? require(map, path, key) : has(map, key))) return false;
  return asTime(map[std::string(key)], join(path, key), out, min);
}

}  // namespace fabricsim

namespace fabricsim {

void YamlReader::useSchema(const Schema& schema, const YAML::Node& root) {
  schema_ = &schema;
  root_.reset(root);
  holding_.reset();
}

const std::vector<std::string>& YamlReader::holdingConditions() const {
  if (holding_) return *holding_;
  // "K: v" (or "K: v | w") holds when K's value is v (or w), and also when K is missing or not
  // one of its choices (that key's own error is enough).
  std::vector<std::string> holding;
  for (const auto& k : schema_->keys()) {
    if (k.when.empty() || std::find(holding.begin(), holding.end(), k.when) != holding.end()) continue;
    const size_t colon = k.when.find(": ");
    SIM_CHECK(colon != std::string::npos, "schema condition without ': ': " + k.when);
    const std::string condKey = k.when.substr(0, colon);
    // reset(), not operator=: assigning to a yaml-cpp Node that shares the document's node
    // would overwrite the document.
    YAML::Node v;
    v.reset(root_);
    for (size_t at = 0; at <= condKey.size() && v.IsDefined();) {
      const size_t dot = std::min(condKey.find('.', at), condKey.size());
      const std::string part = condKey.substr(at, dot - at);
      if (has(v, part))
        v.reset(v[part]);
      else
        v.reset(YAML::Node(YAML::NodeType::Undefined));
      at = dot + 1;
    }
    const KeySpec* ck = schema_->find(condKey);
    const bool valid = v.IsDefined() && v.IsScalar() && ck != nullptr &&
                       std::find(ck->choices.begin(), ck->choices.end(), v.Scalar()) != ck->choices.end();
    bool match = !valid;
    for (size_t at = colon + 2; valid && at <= k.when.size();) {
      const size_t bar = std::min(k.when.find(" | ", at), k.when.size());
      match = match || k.when.substr(at, bar - at) == v.Scalar();
      at = bar + 3;
    }
    if (match) holding.push_back(k.when);
  }
  holding_ = std::move(holding);
  return *holding_;
}

const KeySpec& YamlReader::entry(const std::string& path, std::string_view key,
                                 std::initializer_list<KeyType> types) const {
  SIM_CHECK(schema_ != nullptr, "a schema getter without a schema");
  const std::string p = join(path, key);
  const KeySpec* k = schema_->find(p, holdingConditions());
  SIM_CHECK(k != nullptr, "no schema entry for " + p);
  SIM_CHECK(std::find(types.begin(), types.end(), k->type) != types.end(),
            "schema entry " + p + " is a " + toString(k->type));
  return *k;
}

bool YamlReader::present(const YAML::Node& map, const std::string& path, std::string_view key,
                         const KeySpec& k, Need need) {
  const bool required = need == Need::Schema ? k.required : need == Need::Required;
  return required ? require(map, path, key) : has(map, key);
}

bool YamlReader::inRange(const YAML::Node& v, const std::string& path, const KeySpec& k, double x,
                         const std::string& what, const std::string& found) {
  const bool low = k.hasMin() && (k.minOpen ? x <= k.min : x < k.min);
  const bool high = k.hasMax() && (k.maxOpen ? x >= k.max : x > k.max);
  if (!low && !high) return true;
  const std::string u = k.unit.empty() ? "" : " " + k.unit;
  std::string expected;
  if (k.hasMin() && k.min == 0 && k.minOpen)  // "a positive number", "a positive number below 1"
    expected = "a positive " + what.substr(what.find(' ') + 1) +
               (k.hasMax() ? (k.maxOpen ? " below " : " at most ") + numberText(k.max) + u : "");
  else if (k.hasMin() && k.hasMax() && !k.minOpen && !k.maxOpen)
    expected = what + " between " + numberText(k.min) + " and " + numberText(k.max) + u;
  else
    expected =
        what + (k.hasMin() && k.hasMax() ? " in " : " ") + Schema::rangeText(k);  // "(0.5, 1]", "> 2 s"
  error(v, path, "expected " + expected + ", found " + found);
  return false;
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, int& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Int});
  if (!present(map, path, key, k, need)) return false;
  const int64_t lo = k.hasMin() ? std::llround(k.min) + (k.minOpen ? 1 : 0) : INT32_MIN;
  const int64_t hi = k.hasMax() ? std::llround(k.max) - (k.maxOpen ? 1 : 0) : INT32_MAX;
  return getInt(map, path, key, out, lo, hi);
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, uint64_t& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Int});
  SIM_CHECK(!k.hasMax() && k.hasMin() && k.min == 0 && !k.minOpen, "a 64-bit key's range is >= 0: " + k.path);
  if (!present(map, path, key, k, need)) return false;
  return getUint64(map, path, key, out);
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, double& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Double});
  if (!present(map, path, key, k, need)) return false;
  const YAML::Node v = map[std::string(key)];
  const std::string p = join(path, key);
  double x = 0;
  if (!asDouble(v, p, x, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()))
    return false;
  if (!inRange(v, p, k, x, "a number", v.Scalar())) return false;
  out = x;
  return true;
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, bool& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Bool});
  if (!present(map, path, key, k, need)) return false;
  return getBool(map, path, key, out);
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, std::string& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::String, KeyType::Choice});
  if (!present(map, path, key, k, need)) return false;
  if (k.type == KeyType::String) return getString(map, path, key, out);
  const YAML::Node v = map[std::string(key)];
  const std::string p = join(path, key);
  std::string s;
  if (!scalar(v, p, ("one of " + choicesText(k.choices)).c_str(), s)) return false;
  if (std::find(k.choices.begin(), k.choices.end(), s) == k.choices.end()) {
    error(v, p, "expected one of " + choicesText(k.choices) + ", found '" + s + "'");
    return false;
  }
  out = s;
  return true;
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, Time& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Time});
  SIM_CHECK(!k.hasMax(), "a duration's range has no upper bound: " + k.path);
  if (!present(map, path, key, k, need)) return false;
  Time min = Time::zero();
  if (k.hasMin()) min = Time::ps(std::llround(k.min * 1e12) + (k.minOpen ? 1 : 0));
  return getTime(map, path, key, out, min);
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, Bytes& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Bytes});
  if (!present(map, path, key, k, need)) return false;
  const YAML::Node v = map[std::string(key)];
  const std::string p = join(path, key);
  const Bytes min = k.hasMin() ? static_cast<Bytes>(std::llround(k.min)) + (k.minOpen ? 1 : 0) : 0;
  Bytes x = 0;
  if (!asBytes(v, p, x, k.bare, min)) return false;
  if (!inRange(v, p, k, static_cast<double>(x), "a size", "'" + v.Scalar() + "'")) return false;
  out = x;
  return true;
}

bool YamlReader::read(const YAML::Node& map, const std::string& path, std::string_view key, BitRate& out,
                      Need need) {
  const KeySpec& k = entry(path, key, {KeyType::Rate});
  if (!present(map, path, key, k, need)) return false;
  const YAML::Node v = map[std::string(key)];
  const std::string p = join(path, key);
  BitRate x;
  if (!asRate(v, p, x)) return false;  // positive: parseBitRate refuses 0 and below
  if (!inRange(v, p, k, static_cast<double>(x.bitsPerSecond()), "a rate", "'" + v.Scalar() + "'"))
    return false;
  out = x;
  return true;
}

}  // namespace fabricsim
