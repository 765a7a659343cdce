#include "sim/config/Schema.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "sim/core/Error.h"

namespace fabricsim {

const char* toString(KeyType t) {
  switch (t) {
    case KeyType::Int: return "integer";
    case KeyType::Double: return "number";
    case KeyType::Bool: return "boolean";
    case KeyType::String: return "string";
    case KeyType::Choice: return "one of";
    case KeyType::Time: return "duration";
    case KeyType::Bytes: return "size";
    case KeyType::Rate: return "rate";
    case KeyType::Map: return "map";
    case KeyType::List: return "list";
  }
  return "?";
}

Schema::Schema(std::string fileKind, std::vector<KeySpec> keys) : fileKind_(std::move(fileKind)), keys_(std::move(keys)) {
  std::set<std::string> seen;
  for (const auto& k : keys_) {
    SIM_CHECK(normalise(k.path) == k.path, "schema key written with an index: " + k.path);
    SIM_CHECK(seen.insert(k.path + "|" + k.when).second, "schema key listed twice: " + k.path);
    SIM_CHECK(k.type != KeyType::Choice || !k.choices.empty(), "schema choice without choices: " + k.path);
  }
}

std::string Schema::normalise(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] == '[') {
      while (i + 1 < path.size() && path[i + 1] != ']') ++i;
    }
  }
  return out;
}

const KeySpec* Schema::find(std::string_view path) const {
  const std::string p = normalise(path);
  for (const auto& k : keys_)
    if (k.path == p) return &k;
  return nullptr;
}

const KeySpec* Schema::find(std::string_view path, const std::vector<std::string>& conditions) const {
  const std::string p = normalise(path);
  for (const auto& k : keys_)
    if (k.path == p &&
        (k.when.empty() || std::find(conditions.begin(), conditions.end(), k.when) != conditions.end()))
      return &k;
  return nullptr;
}

std::vector<std::string> Schema::children(std::string_view path, const std::vector<std::string>& conditions) const {
  const std::string prefix = path.empty() ? "" : normalise(path) + ".";
  std::vector<std::string> out;
  for (const auto& k : keys_) {
    if (k.path.size() <= prefix.size() || k.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = k.path.substr(prefix.size());
    if (rest.find('.') != std::string::npos || rest.find('[') != std::string::npos) continue;
    if (!k.when.empty() && std::find(conditions.begin(), conditions.end(), k.when) == conditions.end()) continue;
    if (std::find(out.begin(), out.end(), rest) == out.end()) out.push_back(rest);
  }
  return out;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string Schema::rangeText(const KeySpec& k) {
  if (k.type == KeyType::Choice) {
    std::string s;
    for (const auto& c : k.choices) s += (s.empty() ? "" : " | ") + c;
    return s;
  }
  const std::string u = k.unit.empty() ? "" : " " + k.unit;
  if (k.hasMin() && k.hasMax()) {
    if (!k.minOpen && !k.maxOpen) return number(k.min) + " to " + number(k.max) + u;
    return (k.minOpen ? "(" : "[") + number(k.min) + ", " + number(k.max) + (k.maxOpen ? ")" : "]") + u;
  }
  if (k.hasMin()) return (k.minOpen ? "> " : ">= ") + number(k.min) + u;
  if (k.hasMax()) return (k.maxOpen ? "< " : "<= ") + number(k.max) + u;
  return "";
}

std::string Schema::markdown() const {
  std::string s = "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
  for (const auto& k : keys_) {
    std::string key = "`" + k.path + "`";
    if (!k.when.empty()) key += " (" + k.when + ")";
    s += "| " + cell(key) + " | " + toString(k.type) + " | " + cell(k.required ? "required" : k.defaultText) +
         " | " + cell(rangeText(k)) + " | " + cell(k.description) + " |\n";
  }
  return s;
}

std::string Schema::describe(std::string_view path) const {
  const std::string p = normalise(path);
  std::string s;
  for (const auto& k : keys_) {
    const bool under = p.empty() || k.path == p || k.path.compare(0, p.size() + 1, p + ".") == 0 ||
                       k.path.compare(0, p.size() + 1, p + "[") == 0;
    if (!under) continue;
    s += k.path + (k.when.empty() ? "" : "  (when " + k.when + ")") + "\n";
    s += "  type: " + std::string(toString(k.type)) + (k.unit.empty() ? "" : ", unit " + k.unit) + "\n";
    if (k.required) s += "  required\n";
    else if (!k.defaultText.empty()) s += "  default: " + k.defaultText + "\n";
    if (const std::string r = rangeText(k); !r.empty()) s += "  allowed: " + r + "\n";
    s += "  " + k.description + "\n";
  }
  return s;
}

}  // namespace fabricsim
