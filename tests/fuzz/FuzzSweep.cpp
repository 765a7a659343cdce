// libFuzzer harness: the sweep YAML reader (axes, map values, the point-count limit).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/SweepLoader.h"
#include "tests/fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fabricsim::fuzz::expectOnlyInputErrors([&] { fabricsim::parseSweepYaml(text, "fuzz.yaml"); });
  return 0;
}
