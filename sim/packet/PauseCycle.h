// findPauseCycle: a cycle in the graph of PFC-blocked hops, the signature of a PFC deadlock.
//
// Models: an edge a -> b says that switch a holds packets it cannot send to switch b because b
// has paused that link (for one traffic class). If the edges form a cycle, every switch on it
// waits for the next one to drain and none can: a cyclic buffer dependency, which persists
// until something outside breaks it (a PFC watchdog, a timeout). Found by depth-first search.
// Leaves out: deciding how long a cycle must persist (the caller, PacketWatchdog) and which
// class (the caller builds one graph per class).
// Units: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace fabricsim {

/// One blocked hop: from node `from` toward node `to`, through `from`'s local port `port`.
struct PauseEdge {
  uint32_t from = 0;
  uint32_t to = 0;
  uint32_t port = 0;
};

/// Indices into `edges` of one cycle (in order, each edge's `to` is the next edge's `from`), or
/// empty if the edges form no cycle.
std::vector<size_t> findPauseCycle(const std::vector<PauseEdge>& edges);

}  // namespace fabricsim
