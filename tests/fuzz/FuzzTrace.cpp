// libFuzzer harness: the trace reader (JSON parse, depth limit, rank and count bounds, run
// lengths, send/recv pairing).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/JsonInput.h"
#include "sim/workload/TraceFile.h"
#include "tests/fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fabricsim::fuzz::expectOnlyInputErrors([&] {
    const nlohmann::json doc = fabricsim::JsonInput::parse(text, "fuzz.trace.json");
    fabricsim::traceFromJson(doc, "fuzz.trace.json");
  });
  return 0;
}
