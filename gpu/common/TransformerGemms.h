// TransformerGemms: the matrix multiplications of one transformer layer on one TP rank.
//
// Models: Megatron-LM's split of a layer over `tp` ranks, per micro-batch of T = b*s tokens,
// written as C[m x n] = A[m x k] * B[k x n] with `batch` independent products:
//   qkv        m=T, n=h/tp + 2*max(kv/tp,1)*d, k=h   (d = h/heads; kv = KV heads, GQA)
//   attn_proj  m=T, n=h, k=h/tp
//   mlp_up     m=T, n=f/tp (2f/tp gated), k=h
//   mlp_down   m=T, n=h, k=f/tp
//   attn_scores (Q K^T) batch=b*heads/tp, m=s, n=s, k=d;   attn_values (P V) batch, m=s, n=d, k=s
// Backward of each linear GEMM: data gradient m=T, n=k, k=n and weight gradient m=k, n=n, k=T;
// of the attention GEMMs the two gradient products of each (pass "backward", each with the
// forward's FLOPs).
// FLOPs are 2*m*n*k*batch, so forward + backward of the linear GEMMs is 3x forward, matching
// docs/training-model.md's `2 b s P` forward and backward = 2 x forward.
// Leaves out: softmax, norms, activations, dropout, the logits layer and embedding (not per layer),
// and FlashAttention's fusion (the attention GEMMs are timed as plain batched GEMMs).
// Units: elements (dimensions), FLOPs.
#pragma once

#include <string>
#include <vector>

#include "gpu/common/TransformerShape.h"

namespace fabricsim::gpu {

struct GemmShape {
  std::string name;  ///< "qkv", "attn_proj", "mlp_up", "mlp_down", "attn_scores", "attn_values"
  std::string pass;  ///< "forward", "backward_data", "backward_weight", "backward" (attention)
  long m = 0, n = 0, k = 0;
  long batch = 1;
  double flops() const { return 2.0 * static_cast<double>(m) * n * k * batch; }
};

/// The GEMMs of one layer: forward then backward; attention GEMMs only when `withAttention`.
std::vector<GemmShape> transformerLayerGemms(const TransformerShape& shape, bool withAttention);

}  // namespace fabricsim::gpu
