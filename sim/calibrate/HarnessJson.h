// HarnessJson: what the readers of the gpu/ harness's JSON documents share: parsing with the
// line of a syntax error, the line of a key (JSON keeps no positions: its first occurrence in
// the text), and the check that a document is the expected tool's at the expected schema.
// Units: lines from 1.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fabricsim {

class HarnessJson {
 public:
  /// Parses `text`; throws InputError with `file` and the error's line.
  static nlohmann::json parse(const std::string& text, const std::string& file);
  /// The line of the first occurrence of "key" in `text`; 1 if absent.
  static int lineOf(const std::string& text, const std::string& key);
  /// Throws InputError (file, the line of its key) unless `j` is an object whose `tool` is `tool`
  /// and whose `schema` is `schema`. `kind` names the document ("compute result"); a document of
  /// `otherTool` gets `otherHint` (where to give it instead).
  static void require(const nlohmann::json& j, const std::string& text, const std::string& file,
                      const char* tool, int schema, const std::string& kind, const char* otherTool,
                      const std::string& otherHint);
};

}  // namespace fabricsim
