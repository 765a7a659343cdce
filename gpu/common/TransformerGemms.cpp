#include "gpu/common/TransformerGemms.h"

#include <algorithm>

namespace fabricsim::gpu {

std::vector<GemmShape> transformerLayerGemms(const TransformerShape& s, bool withAttention) {
  const long t = s.tokens();
  const long h = s.hidden;
  const long d = s.headDim();
  const long tp = s.tp;
  // Megatron replicates KV heads when tp exceeds their number: each rank keeps at least one.
  const long kvPerRank = std::max<long>(s.kvHeads / tp, 1);
  const long qkvOut = h / tp + 2L * kvPerRank * d;
  const long ffnOut = (s.gatedMlp ? 2L : 1L) * s.ffnHidden / tp;
  struct Linear {
    const char* name;
    long n, k;
  };
  const Linear linears[] = {
      {"qkv", qkvOut, h}, {"attn_proj", h, h / tp}, {"mlp_up", ffnOut, h}, {"mlp_down", h, s.ffnHidden / tp}};
  std::vector<GemmShape> out;
  for (const auto& l : linears) out.push_back({l.name, "forward", t, l.n, l.k, 1});
  const long batch = static_cast<long>(s.microBatch) * (s.heads / tp);
  const long seq = s.seqLen;
  if (withAttention) {
    out.push_back({"attn_scores", "forward", seq, seq, d, batch});
    out.push_back({"attn_values", "forward", seq, d, seq, batch});
  }
  for (const auto& l : linears) {
    out.push_back({l.name, "backward_data", t, l.k, l.n, 1});
    out.push_back({l.name, "backward_weight", l.k, l.n, t, 1});
  }
  if (withAttention) {
    // scores S = Q K^T: dQ = dS K (s x d, inner s), dK = dS^T Q (s x d, inner s)
    out.push_back({"attn_scores", "backward", seq, d, seq, batch});
    out.push_back({"attn_scores", "backward", seq, d, seq, batch});
    // values O = P V: dP = dO V^T (s x s, inner d), dV = P^T dO (s x d, inner s)
    out.push_back({"attn_values", "backward", seq, seq, d, batch});
    out.push_back({"attn_values", "backward", seq, d, seq, batch});
  }
  return out;
}

}  // namespace fabricsim::gpu
