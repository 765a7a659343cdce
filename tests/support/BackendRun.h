// BackendRun: runs `fabricsim run ARGS --backend B` into a results file and returns the parsed
// results, for the tests that compare backends.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/CliRunner.h"
#include "tests/support/TempDir.h"

namespace fabricsim::testsupport {

/// The results of `fabricsim run <args> --backend <backend> --quiet` (written to DIR/<backend>.json),
/// or null after a failed test expectation when the run fails.
inline nlohmann::json runBackend(const TempDir& dir, const std::string& args, const std::string& backend) {
  const std::string out = dir.file(backend + ".json");
  const CliResult r =
      runFabricsim("run " + args + " --backend " + backend + " --out '" + out + "' --quiet", "2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  if (r.status != 0 || !std::filesystem::exists(out)) return {};
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace fabricsim::testsupport
