#include "sim/calibrate/HarnessJson.h"

#include <algorithm>

#include "sim/config/JsonInput.h"
#include "sim/core/Error.h"

namespace fabricsim {

nlohmann::json HarnessJson::parse(const std::string& text, const std::string& file) {
  return JsonInput::parse(text, file);
}

int HarnessJson::lineOf(const std::string& text, const std::string& key) {
  const size_t at = text.find("\"" + key + "\"");
  return at == std::string::npos
             ? 1
             : 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

void HarnessJson::require(const nlohmann::json& j, const std::string& text, const std::string& file,
                          const char* tool, int schema, const std::string& kind, const char* otherTool,
                          const std::string& otherHint) {
  const std::string what =
      "the gpu/ harness's " + kind + " (tool " + tool + ", schema " + std::to_string(schema) + ")";
  if (!j.is_object() || !j.contains("tool") || !j["tool"].is_string())
    throw InputError(file, lineOf(text, "tool"), 0, "tool", "expected " + what);
  if (j["tool"] == otherTool) throw InputError(file, lineOf(text, "tool"), 0, "tool", otherHint);
  if (j["tool"] != tool)
    throw InputError(file, lineOf(text, "tool"), 0, "tool",
                     "expected " + what + ", found tool '" + j["tool"].get<std::string>() + "'");
  if (!j.contains("schema") || !j["schema"].is_number_integer() || j["schema"].get<int64_t>() != schema)
    throw InputError(file, lineOf(text, "schema"), 0, "schema",
                     "expected schema " + std::to_string(schema) + " (this fabricsim reads " + what +
                         "), found " +
                         (j.contains("schema") ? JsonInput::brief(j["schema"]) : std::string("none")) +
                         ": rerun the harness of this version");
}

}  // namespace fabricsim
