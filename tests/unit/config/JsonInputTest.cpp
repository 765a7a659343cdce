// JsonInput and readInputFile against the inputs issue 21's fuzzing found to crash or hang the
// readers: a value nested 100,000 deep (stack overflow when an error message dumped it), 1e999
// (an out_of_range exception that escaped as a raw library message, exit 1), a FIFO (blocked
// forever) and /dev/zero (grew until memory ran out). Each is an InputError naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "sim/config/JsonInput.h"
#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"
#include "tests/support/TempDir.h"

using namespace fabricsim;
using fabricsim::testsupport::TempDir;

namespace {

Diagnostic diagnosticOf(const std::string& text) {
  try {
    JsonInput::parse(text, "in.json");
  } catch (const InputError& e) {
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

}  // namespace

TEST(JsonInput, ParsesWhatIsValid) {
  const auto j = JsonInput::parse(R"({"a": [1, 2, {"b": "c"}]})", "in.json");
  EXPECT_EQ(j["a"][2]["b"], "c");
}

TEST(JsonInput, BadSyntaxNamesFileAndLine) {
  const Diagnostic d = diagnosticOf("{\n\"a\": 1,\n\"b\": }\n");
  EXPECT_EQ(d.file, "in.json");
  EXPECT_EQ(d.line, 3);
  EXPECT_NE(d.message.find("invalid JSON"), std::string::npos) << d.message;
}

TEST(JsonInput, ANumberBeyondDoubleIsAnInputError) {
  const Diagnostic d = diagnosticOf(R"({"ranks": 1e999})");
  EXPECT_EQ(d.file, "in.json");
  EXPECT_NE(d.message.find("1e999"), std::string::npos) << d.message;
}

TEST(JsonInput, DeepNestingIsRefusedBeforeAnythingRecursesOverIt) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const Diagnostic d = diagnosticOf("{\"ranks\": " + deep + "}");
  EXPECT_NE(d.message.find("nested deeper than 64"), std::string::npos) << d.message;
  // The limit itself passes.
  EXPECT_NO_THROW(JsonInput::parse(std::string(63, '[') + std::string(63, ']'), "in.json"));
}

TEST(JsonInput, BriefDescribesContainersBySize) {
  EXPECT_EQ(JsonInput::brief(nlohmann::json::array({1, 2, 3})), "an array of 3 values");
  EXPECT_EQ(JsonInput::brief(nlohmann::json{{"a", 1}}), "an object of 1 keys");
  EXPECT_EQ(JsonInput::brief(nlohmann::json(2.5)), "2.5");
  EXPECT_EQ(JsonInput::brief(nlohmann::json(std::string(100, 'x'))), "\"" + std::string(40, 'x') + "\"...");
  // A cut through a two-byte character (39 'x' then 'é'): replaced, not thrown.
  EXPECT_NO_THROW(JsonInput::brief(nlohmann::json(std::string(39, 'x') + "\xc3\xa9" + std::string(10, 'y'))));
}

TEST(ReadInputFile, OnlyARegularFileIsRead) {
  TempDir dir;
  EXPECT_EQ(readInputFile(dir.write("a.yaml", "x: 1\n")), "x: 1\n");
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(readInputFile(fifo), InputError);  // returns at once: never opened
  EXPECT_THROW(readInputFile(dir.path()), InputError);
  EXPECT_THROW(readInputFile(dir.file("missing.yaml")), InputError);
  if (::access("/dev/zero", R_OK) == 0) {
    EXPECT_THROW(readInputFile("/dev/zero"), InputError);
  }
}
