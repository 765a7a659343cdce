#include "sim/core/Error.h"

namespace fabricsim {

std::string Diagnostic::format() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) out += "'" + key + "': ";
  out += message;
  return out;
}

InputError::InputError(std::vector<Diagnostic> diags)
    : std::runtime_error(join(diags)), diags_(std::move(diags)) {}

InputError::InputError(std::string file, int line, int column, std::string key, std::string message)
    : InputError(std::vector<Diagnostic>{
          Diagnostic{std::move(file), line, column, std::move(key), std::move(message)}}) {}

std::string InputError::join(const std::vector<Diagnostic>& d) {
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) out += "\n";
    out += d[i].format();
  }
  return out;
}

void checkFailed(const char* expr, const char* file, int line, const std::string& msg) {
  throw SimError(std::string("internal check failed: ") + expr + " at " + file + ":" +
                 std::to_string(line) + ": " + msg);
}

}  // namespace fabricsim
