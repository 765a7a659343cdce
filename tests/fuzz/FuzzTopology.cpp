// libFuzzer harness: the topology YAML reader (parse, schema, limits), with the input as the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/TopologyLoader.h"
#include "tests/fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fabricsim::fuzz::expectOnlyInputErrors([&] { fabricsim::parseTopologyYaml(text, "fuzz.yaml"); });
  return 0;
}
