#include "sim/config/YamlDocuments.h"

namespace fabricsim {

namespace {

bool isSeparator(const std::string& text, size_t begin, size_t end) {
  if (end - begin < 3 || text.compare(begin, 3, "---") != 0) return false;
  if (end - begin == 3) return true;
  const char c = text[begin + 3];
  return c == ' ' || c == '\t' || c == '\r';
}

/// Whether the line holds YAML content (not blank, not a comment, not a directive).
bool isContent(const std::string& text, size_t begin, size_t end) {
  size_t i = begin;
  while (i < end && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
  return i < end && text[i] != '#' && !(i == begin && text[i] == '%');
}

}  // namespace

std::vector<YAML::Node> loadYamlDocuments(const std::string& text, size_t most) {
  // Where each document starts (byte offset) and on which line (0-based).
  std::vector<std::pair<size_t, size_t>> starts;
  bool content = false;  // content seen since the last start
  size_t line = 0;
  for (size_t begin = 0; begin < text.size(); ++line) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (isSeparator(text, begin, end)) {
      if (starts.empty() && !content)
        starts.emplace_back(0, 0);  // what came before opens this document
      else
        starts.emplace_back(begin, line);
      content = true;  // a separator opens a document, even one with nothing after it
    } else if (isContent(text, begin, end)) {
      if (starts.empty()) starts.emplace_back(0, 0);
      content = true;
    }
    begin = end + 1;
  }
  std::vector<YAML::Node> docs;
  for (size_t d = 0; d < starts.size() && docs.size() < most; ++d) {
    const size_t from = starts[d].first;
    const size_t to = d + 1 < starts.size() ? starts[d + 1].first : text.size();
    docs.push_back(YAML::Load(std::string(starts[d].second, '\n') + text.substr(from, to - from)));
  }
  return docs;
}

}  // namespace fabricsim
