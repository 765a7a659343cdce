#include "sim/config/JsonInput.h"

#include <algorithm>

#include "sim/core/Error.h"

namespace fabricsim {

int JsonInput::lineAt(const std::string& text, size_t byte) {
  const size_t upto = std::min(byte, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(upto), '\n'));
}

nlohmann::json JsonInput::parse(const std::string& text, const std::string& file) {
  // The parser calls back at each value with its depth: a nesting past the limit stops it there.
  const auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (depth > kMaxDepth && (event == nlohmann::json::parse_event_t::object_start ||
                              event == nlohmann::json::parse_event_t::array_start))
      throw InputError(file, 0, 0, "",
                       "values nested deeper than " + std::to_string(kMaxDepth) +
                           " levels; expected at most " + std::to_string(kMaxDepth));
    return true;
  };
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(file, lineAt(text, e.byte), 0, "", std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406: a number that does not fit a double (1e999).
    throw InputError(file, 0, 0, "", std::string("invalid JSON: ") + e.what());
  }
}

std::string JsonInput::brief(const nlohmann::json& j) {
  if (j.is_array()) return "an array of " + std::to_string(j.size()) + " values";
  if (j.is_object()) return "an object of " + std::to_string(j.size()) + " keys";
  if (j.is_string()) {
    // Cut at 40 bytes, which may split a UTF-8 character: replaced, never an exception.
    const std::string& s = j.get_ref<const std::string&>();
    const auto quoted = [](const std::string& x) {
      return nlohmann::json(x).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    return s.size() <= 40 ? quoted(s) : quoted(s.substr(0, 40)) + "...";
  }
  return j.dump();  // a number, bool or null: no recursion
}

}  // namespace fabricsim
