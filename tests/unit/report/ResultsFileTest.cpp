// ResultsFile: outputs written whole or not at all, never replacing what is not a regular file,
// and output paths checked before the work that fills them (issue 21's output-file defects: a
// device node replaced by a JSON file, a missing folder found only after the simulation, a
// temporary file left behind by a failed write).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"
#include "tests/support/TempDir.h"

using namespace fabricsim;
using fabricsim::testsupport::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Names in `dir` (no temporary file may stay behind).
size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

bool isCharDevice(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

TEST(ResultsFile, WritesAWholeDocumentAndReplacesTheOldOne) {
  TempDir dir;
  const std::string p = dir.write("r.json", "old");
  ResultsFile::writeJson(p, nlohmann::json{{"a", 1}});
  EXPECT_EQ(nlohmann::json::parse(slurp(p)), (nlohmann::json{{"a", 1}}));
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(ResultsFile, AFailedWriteLeavesTheOldFileAndNoTemporaryFile) {
  TempDir dir;
  const std::string p = dir.write("r.json", "old");
  EXPECT_THROW(ResultsFile::writeWith(p,
                                      [](std::ostream& out) {
                                        out << "half";
                                        throw std::runtime_error("the document could not be built");
                                      }),
               std::runtime_error);
  EXPECT_EQ(slurp(p), "old");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(ResultsFile, AFolderIsRefusedAndLeftAlone) {
  TempDir dir;
  const std::string sub = dir.file("out");
  std::filesystem::create_directory(sub);
  EXPECT_THROW(ResultsFile::writeJson(sub, nlohmann::json::object()), InputError);
  EXPECT_TRUE(std::filesystem::is_directory(sub));
  EXPECT_EQ(entries(dir.path()), 1u);
  EXPECT_THROW(ResultsFile::checkOutputPath(sub, "--out"), InputError);
}

TEST(ResultsFile, AMissingFolderIsFoundBeforeAnyWork) {
  TempDir dir;
  try {
    ResultsFile::checkOutputPath(dir.file("missing/r.json"), "--out");
    FAIL() << "a path in a missing folder passed";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].key, "--out");
    EXPECT_EQ(e.diagnostics()[0].file, dir.file("missing/r.json"));
  }
  EXPECT_NO_THROW(ResultsFile::checkOutputPath(dir.file("r.json"), "--out"));
  EXPECT_NO_THROW(ResultsFile::checkOutputPath("", "--out"));  // no such output
}

// A device is written in place, never renamed over: /dev/null takes the document and stays a
// device; /dev/full fails with its error (no space) and stays a device. Skipped where the
// machine has no such node.
TEST(ResultsFile, ADeviceIsWrittenInPlaceNotReplaced) {
  if (!isCharDevice("/dev/null") || !isCharDevice("/dev/full")) GTEST_SKIP() << "no /dev/null or /dev/full";
  EXPECT_NO_THROW(ResultsFile::checkOutputPath("/dev/null", "--out"));
  EXPECT_NO_THROW(ResultsFile::writeJson("/dev/null", nlohmann::json{{"a", 1}}));
  EXPECT_TRUE(isCharDevice("/dev/null"));
  EXPECT_THROW(ResultsFile::writeJson("/dev/full", nlohmann::json{{"a", std::string(1 << 16, 'x')}}),
               std::runtime_error);
  EXPECT_TRUE(isCharDevice("/dev/full"));
}
