// libFuzzer harness: the workload YAML reader (every kind's schema, sizes, parallelism limits).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/WorkloadLoader.h"
#include "tests/fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fabricsim::fuzz::expectOnlyInputErrors([&] { fabricsim::parseWorkloadYaml(text, "fuzz.yaml"); });
  return 0;
}
