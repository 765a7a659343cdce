// ModelPresets: the published shapes of well-known transformer models, by name.
//
// Models: gpt3-175b (Brown et al. 2020, table 2.1: 96 layers, d_model 12288, 96 heads, context
// 2048, GPT-2 BPE vocabulary of 50257), llama3-70b and llama3-405b (Llama 3 paper, table 3:
// 80 / 126 layers, d_model 8192 / 16384, FFN 28672 / 53248, 64 / 128 heads, 8 KV heads
// (grouped-query attention), vocabulary 128256, SwiGLU, 8192 context in pre-training).
// Leaves out: anything but the shape (no weights, no training recipe).
// Units: counts (layers, heads, tokens, hidden sizes).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/WorkloadSpec.h"

namespace fabricsim {

/// The preset called `name` (ModelSpec::preset set to it), or nullopt if there is none.
std::optional<ModelSpec> modelPreset(std::string_view name);

/// Every preset name, in a fixed order (for messages: "expected one of ...").
const std::vector<std::string>& modelPresetNames();

}  // namespace fabricsim
