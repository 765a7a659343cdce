#include "sim/config/SetOverride.h"

#include <cctype>

#include "sim/core/Error.h"

namespace fabricsim {
namespace {

[[noreturn]] void bad(const std::string& assignment, const std::string& why) {
  throw InputError("", 0, 0, "--set", "'" + assignment + "': " + why);
}

bool validKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

}  // namespace

SetAssignment parseSetAssignment(const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) bad(assignment, "expected key.path=value (no '=' found)");
  SetAssignment out;
  out.keyPath = assignment.substr(0, eq);
  out.value = assignment.substr(eq + 1);
  while (!out.keyPath.empty() && std::isspace(static_cast<unsigned char>(out.keyPath.back())))
    out.keyPath.pop_back();
  if (out.keyPath.empty()) bad(assignment, "expected key.path=value (the key path is empty)");
  std::string seg;
  for (size_t i = 0; i <= out.keyPath.size(); ++i) {
    if (i == out.keyPath.size() || out.keyPath[i] == '.') {
      if (seg.empty()) bad(assignment, "empty component in key path '" + out.keyPath + "'");
      out.path.push_back(seg);
      seg.clear();
    } else if (validKeyChar(out.keyPath[i])) {
      seg += out.keyPath[i];
    } else {
      bad(assignment, std::string("invalid character '") + out.keyPath[i] + "' in key path '" + out.keyPath +
                          "' (keys are letters, digits, '_' and '-', separated by '.')");
    }
  }
  bool blank = true;
  for (char c : out.value) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) bad(assignment, "missing value after '='");
  return out;
}

void applySetOverride(YAML::Node& root, const std::string& assignment) {
  const SetAssignment a = parseSetAssignment(assignment);
  YAML::Node value;
  try {
    value = YAML::Load(a.value);
  } catch (const YAML::Exception& e) {
    bad(assignment, "the value is not valid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) bad(assignment, "the document's top level is not a map");
  // Walk with reset() (rebinding), never operator= (which would overwrite nodes in place).
  YAML::Node cur;
  cur.reset(root);
  std::string walked;
  for (size_t i = 0; i + 1 < a.path.size(); ++i) {
    const std::string& k = a.path[i];
    walked += (walked.empty() ? "" : ".") + k;
    YAML::Node next = cur[k];
    if (!next.IsDefined() || next.IsNull()) {
      cur[k] = YAML::Node(YAML::NodeType::Map);
    } else if (!next.IsMap()) {
      bad(assignment, "'" + walked + "' is not a map, so it has no key '" + a.path[i + 1] + "'");
    }
    YAML::Node child = cur[k];
    cur.reset(child);
  }
  cur[a.path.back()] = value;
}

}  // namespace fabricsim
