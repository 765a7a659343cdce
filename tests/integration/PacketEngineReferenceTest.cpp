// The packet engine's refactoring guard: each scenario of tests/data/engine-reference/scenarios.txt
// (every forwarding mode, PFC and InfiniBand credits, every congestion control, the MMU's
// thresholds, a failure with BGP reconvergence, a training job) is run with `fabricsim run` and its
// results JSON must equal the committed NAME.json byte for byte, leaving out only the keys of
// ignored-keys.txt (the host's clock and memory, the engine's event counts).
//
// What it checks: that a change to the event core, the packet storage or the forwarding path,
// meant to leave the model alone, did (same packets, same fates, same order of ties: one changed
// tie would move a mark, a pause or a finishing time). What it does not check: that the reference
// is right; the physics tests do that. A change meant to change the model regenerates the files
// (scripts/engine_reference.py) and names the scenarios that moved in its commit message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

namespace {

const std::string kFolder = std::string(FABRICSIM_SOURCE_DIR) + "/tests/data/engine-reference";

struct Scenario {
  std::string name;
  std::string args;  // as a shell reads them
};
void PrintTo(const Scenario& s, std::ostream* os) {
  *os << s.name;
}

std::vector<std::string> dataLines(const std::string& file) {
  std::vector<std::string> out;
  std::ifstream in(kFolder + "/" + file);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    out.push_back(line.substr(first));
  }
  return out;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  for (const std::string& line : dataLines("scenarios.txt")) {
    const auto space = line.find(' ');
    out.push_back(space == std::string::npos ? Scenario{line, ""}
                                             : Scenario{line.substr(0, space), line.substr(space + 1)});
  }
  return out;
}

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

/// The results without the keys that describe the host or the engine's bookkeeping.
nlohmann::json normalised(nlohmann::json j) {
  for (const std::string& key : dataLines("ignored-keys.txt")) {
    const nlohmann::json::json_pointer ptr(key);
    if (!j.contains(ptr)) continue;
    j[ptr.parent_pointer()].erase(ptr.back());
  }
  return j;
}

class PacketEngineReference : public testing::TestWithParam<Scenario> {};

TEST_P(PacketEngineReference, ResultsAreByteIdenticalToTheReference) {
  const Scenario& s = GetParam();
  ASSERT_FALSE(s.args.empty()) << s.name << ": no arguments in scenarios.txt";
  const std::string refPath = kFolder + "/" + s.name + ".json";
  ASSERT_TRUE(std::filesystem::exists(refPath)) << refPath << " is missing: run scripts/engine_reference.py";
  fabricsim::testsupport::TempDir dir;
  const std::string out = dir.file("r.json");
  const auto r = fabricsim::testsupport::runFabricsim("run " + s.args + " --quiet --out '" + out + "'",
                                                      "2>&1", "cd '" FABRICSIM_SOURCE_DIR "' && ");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json got = normalised(readJson(out));
  const nlohmann::json want = normalised(readJson(refPath));
  if (got.dump(1) == want.dump(1)) return;
  // Name the first differences (JSON patch paths) rather than two 10 KB documents.
  std::string where;
  int shown = 0;
  for (const auto& op : nlohmann::json::diff(want, got)) {
    if (++shown > 12) break;
    const std::string path = op["path"].get<std::string>();
    where += "\n  " + op["op"].get<std::string>() + " " + path;
    const nlohmann::json::json_pointer ptr(path);
    if (want.contains(ptr)) where += ": reference " + want[ptr].dump().substr(0, 80);
    if (got.contains(ptr)) where += ", now " + got[ptr].dump().substr(0, 80);
  }
  ADD_FAILURE() << s.name << ": results differ from " << refPath << where
                << "\n(a change meant to change the model regenerates them: scripts/engine_reference.py)";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, PacketEngineReference, testing::ValuesIn(scenarios()),
                         [](const testing::TestParamInfo<Scenario>& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
