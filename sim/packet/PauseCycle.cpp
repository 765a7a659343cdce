#include "sim/packet/PauseCycle.h"

#include <algorithm>
#include <unordered_map>

namespace fabricsim {

std::vector<size_t> findPauseCycle(const std::vector<PauseEdge>& edges) {
  // Adjacency by node, in edge order (deterministic).
  std::unordered_map<uint32_t, std::vector<size_t>> out;
  std::vector<uint32_t> nodes;
  for (size_t i = 0; i < edges.size(); ++i) {
    auto [it, inserted] = out.try_emplace(edges[i].from);
    if (inserted) nodes.push_back(edges[i].from);
    it->second.push_back(i);
  }
  std::sort(nodes.begin(), nodes.end());
  enum class Mark : uint8_t { New, OnPath, Done };
  std::unordered_map<uint32_t, Mark> mark;
  std::vector<size_t> path;  // edges from the DFS root to the current node
  struct Frame {
    uint32_t node;
    size_t next;  // next outgoing edge to try
  };
  for (uint32_t root : nodes) {
    if (mark[root] != Mark::New) continue;
    std::vector<Frame> stack{{root, 0}};
    mark[root] = Mark::OnPath;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto it = out.find(f.node);
      if (it == out.end() || f.next >= it->second.size()) {
        mark[f.node] = Mark::Done;
        stack.pop_back();
        if (!path.empty()) path.pop_back();
        continue;
      }
      const size_t e = it->second[f.next++];
      const uint32_t to = edges[e].to;
      const Mark m = mark[to];
      if (m == Mark::OnPath) {
        // The cycle is the part of the path from `to` onward, closed by e.
        size_t start = 0;
        while (start < path.size() && edges[path[start]].from != to) ++start;
        std::vector<size_t> cycle(path.begin() + static_cast<long>(start), path.end());
        cycle.push_back(e);
        return cycle;
      }
      if (m == Mark::New) {
        mark[to] = Mark::OnPath;
        path.push_back(e);
        stack.push_back(Frame{to, 0});
      }
    }
  }
  return {};
}

}  // namespace fabricsim
