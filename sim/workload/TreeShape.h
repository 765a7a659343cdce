// TreeShape: the shape of NCCL's double binary tree (ncclGetBtree / ncclGetDtree) over n
// nodes, as the parent of each node.
//
// Models: tree 0 is an in-order binary tree over node indices 0..n-1 (node 0 the root with one
// child); tree 1 is its mirror (n even: node i plays n-1-i) or its shift by one (n odd: node i
// plays i-1), so that a leaf of one tree is an interior node of the other and each node sends
// and receives at most twice per direction over both trees.
// Leaves out: everything but the shape (which data flow over it: see CollectiveEngine).
// Units: none (node indices).
#pragma once

#include <algorithm>
#include <cstdint>

namespace fabricsim {

struct TreeShape {
  static constexpr int64_t kNone = -1;

  /// Parent of `node` in NCCL's binary tree over n nodes (tree 0), or kNone for the root (0).
  static int64_t btreeParent(int64_t n, int64_t node) {
    if (node == 0) return kNone;
    int64_t bit = 1;
    while (bit < n && (bit & node) == 0) bit <<= 1;
    int64_t up = (node ^ bit) | (bit << 1);
    if (up >= n) up = node ^ bit;
    return up;
  }

  /// Parent of `node` in tree `tree` (0 or 1) of the double binary tree over n nodes, or kNone
  /// for that tree's root.
  static int64_t parent(int64_t n, int64_t node, int tree) {
    if (tree == 0) return btreeParent(n, node);
    if (n % 2 == 1) {
      const int64_t shifted = (node - 1 + n) % n;
      const int64_t up = btreeParent(n, shifted);
      return up == kNone ? kNone : (up + 1) % n;
    }
    const int64_t up = btreeParent(n, n - 1 - node);
    return up == kNone ? kNone : n - 1 - up;
  }

  /// Edges from the deepest node to its root, the larger over the two trees of n nodes.
  static int64_t depth(int64_t n) {
    int64_t deepest = 0;
    for (int tree = 0; tree < 2; ++tree)
      for (int64_t node = 0; node < n; ++node) {
        int64_t d = 0;
        for (int64_t x = parent(n, node, tree); x != kNone; x = parent(n, x, tree)) ++d;
        deepest = std::max(deepest, d);
      }
    return deepest;
  }
};

}  // namespace fabricsim
