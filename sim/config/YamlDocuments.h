// YamlDocuments: the first documents of a YAML stream (`---`-separated), without yaml-cpp's
// LoadAll, which in 0.7 never returns on some malformed input (a stray `,` makes its parser
// hand back an empty document forever without consuming the token).
//
// Models: a document separator is a line that starts with `---` followed by a blank or the end of
// the line (YAML 1.2 document markers at column 0). The stream is cut at those lines; text before
// the first one that holds only blank lines, comments and directives (`%`) belongs to the
// document it opens. Each document is parsed on its own by YAML::Load, with the lines before it
// blanked, so that its nodes' marks keep the file's line numbers.
// Leaves out: `...` document-end markers followed by more content on the same stream without a
// `---` (yaml-cpp reads them as one document, as here).
// Units: none.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

namespace fabricsim {

/// The first `most` documents of `text` (fewer when it has fewer; none for a stream with no
/// content). Throws YAML::Exception (with the file's line in its mark) for a malformed one.
std::vector<YAML::Node> loadYamlDocuments(const std::string& text, size_t most);

}  // namespace fabricsim
