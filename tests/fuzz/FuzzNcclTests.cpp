// libFuzzer harness: the nccl-tests output reader (rank lines, data rows, N/A figures).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/calibrate/NcclTestsParser.h"
#include "tests/fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fabricsim::fuzz::expectOnlyInputErrors(
      [&] { fabricsim::NcclTestsParser::parse(text, "all_reduce_perf.log"); });
  return 0;
}
