// EventHandler: the interface of anything the event queue can wake up.
//
// Models: a simulation component that reacts to its own timed events. Components are their
// own event targets; an event carries a 32-bit tag the component interprets (often a kind in
// the low bits and a generation number in the high bits for lazy cancellation).
// Leaves out: payloads; a component keeps whatever state the event refers to.
#pragma once

#include <cstdint>

namespace fabricsim {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  /// Called when an event scheduled for this handler becomes due.
  virtual void onEvent(uint32_t tag) = 0;
  /// Called with the event that will most likely run next, just before the current one runs:
  /// a handler whose event will read memory its own fields point to (a packet port: the packet
  /// arriving, the switch it arrives at) asks the cache for it here, so that those misses overlap
  /// the current event. Must not change any state. Default: nothing.
  virtual void prefetchFor(uint32_t /*tag*/) const {}
};

/// Asks the cache for the first kHandlerHotBytes of `h` (its vtable pointer and the fields a handler
/// lays out first because its events read them: a packet port's transmitter, peer and wire, see
/// EgressPort). The event queue calls it for an event a few pops before it is due; in a fabric
/// too large for the cache this overlaps the misses with the events in between.
inline constexpr int kHandlerHotBytes = 320;
inline void prefetchHandler(const EventHandler* h) {
  const char* p = reinterpret_cast<const char*>(h);
  for (int off = 0; off < kHandlerHotBytes; off += 64) __builtin_prefetch(p + off);
}

}  // namespace fabricsim
