// libFuzzer harness: a `--set key.path=value` assignment applied to a topology document (the
// first line of the input is the assignment, the rest the document).
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/SetOverride.h"
#include "sim/config/TopologyLoader.h"
#include "tests/fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const std::string assignment = text.substr(0, nl);
  const std::string document = nl == std::string::npos ? "" : text.substr(nl + 1);
  fabricsim::fuzz::expectOnlyInputErrors([&] { fabricsim::parseSetAssignment(assignment); });
  fabricsim::fuzz::expectOnlyInputErrors(
      [&] { fabricsim::parseTopologyYaml(document, "fuzz.yaml", {assignment}); });
  return 0;
}
