// loadYamlDocuments: documents cut at `---` lines, with the file's line numbers, and an answer
// for input on which yaml-cpp 0.7's LoadAll never returns.
#include "sim/config/YamlDocuments.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/WorkloadLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

TEST(YamlDocuments, AStrayCommaIsOneNullDocumentNotAHang) {
  // LoadAll(",") loops forever in yaml-cpp 0.7 (issue 21).
  for (const char* text : {",", ",# n"}) {
    const auto docs = loadYamlDocuments(text, 2);
    ASSERT_EQ(docs.size(), 1u) << text;
    EXPECT_TRUE(docs[0].IsNull()) << text;
  }
  EXPECT_THROW(loadYamlDocuments("a: 1\n,\n", 2), YAML::Exception);  // malformed, and said so
}

TEST(YamlDocuments, CutsAtSeparatorLinesAndKeepsTheFilesLineNumbers) {
  const auto docs = loadYamlDocuments("# header\na: 1\n---\n\nb: 2\n--- c\n", 5);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0]["a"].as<int>(), 1);
  EXPECT_EQ(docs[1]["b"].as<int>(), 2);
  EXPECT_EQ(docs[1]["b"].Mark().line, 4);  // 0-based: the fifth line of the file
  EXPECT_EQ(docs[2].as<std::string>(), "c");
  EXPECT_EQ(loadYamlDocuments("# header\na: 1\n---\n\nb: 2\n--- c\n", 2).size(), 2u);  // at most `most`
}

TEST(YamlDocuments, AnOpeningSeparatorAfterCommentsAndDirectivesIsTheFirstDocument) {
  const auto docs = loadYamlDocuments("%YAML 1.2\n# c\n---\na: 1\n", 2);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["a"].as<int>(), 1);
  EXPECT_EQ(docs[0]["a"].Mark().line, 3);
  EXPECT_TRUE(loadYamlDocuments("", 2).empty());
  EXPECT_TRUE(loadYamlDocuments("# only a comment\n\n", 2).empty());
  // "----" and "---x" are not separators.
  EXPECT_EQ(loadYamlDocuments("a: |\n  ----\n  ---x\n", 2).size(), 1u);
}

TEST(YamlDocuments, MalformedYamlThrowsWithItsLine) {
  try {
    loadYamlDocuments("a: 1\n---\nb: [1, 2\n", 2);
    FAIL() << "expected a YAML error";
  } catch (const YAML::Exception& e) {
    EXPECT_GE(e.mark.line, 2);  // in the second document, counted in the file's lines
  }
}

TEST(YamlDocuments, AWorkloadFileOfAStrayCommaIsAnInputError) {
  EXPECT_THROW(parseWorkloadYaml(",", "w.yaml"), InputError);
  try {
    parseWorkloadYaml("kind: pattern\npattern: permutation\nmessage_size: 1MB\n---\nkind: pattern\n",
                      "w.yaml");
    FAIL() << "two documents";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("w.yaml:5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected one workload per file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricsim
