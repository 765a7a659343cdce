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
};

}  // namespace fabricsim
