// PfcHeadroom: the buffer a lossless (ingress port, priority) must keep free beyond XOFF so that
// nothing is lost while its PAUSE takes effect.
//
// Models the IEEE 802.1Qbb headroom budget (802.1Qbb Annex N; the same terms in Cisco's "Priority
// Flow Control: Build Reliable Layer 2 Infrastructure" white paper and the vendor calculators
// derived from it). Counting from the moment this switch processes the packet that crosses XOFF,
// what still arrives is what the peer sends until it stops:
//   - MTU[R]: the PAUSE cannot pre-empt a frame this port has started toward the peer: one
//     maximum frame of delay (any class: PAUSE jumps every queue but not the wire);
//   - the PAUSE frame itself (84 wire bytes), behind at most one queued PAUSE of each other
//     lossless class of the port (this model sends one PFC frame per class);
//   - the wire both ways: 2 x propagation x rate (a link's `latency` is its propagation delay);
//   - this switch's forwarding latency x rate: in this model a frame is admitted to the buffer
//     that long after its last bit arrives, so as many bytes are in the pipeline ahead of it;
//   - the peer's PAUSE response time x rate (IEEE 802.3 Annex 31B bounds it at 394 quanta at
//     100 Gb/s; the model acts on a PAUSE after `pfc.response_time`, default 0 as in ns-3 and
//     htsim);
//   - MTU[S]: the frame the peer has started when it stops completes;
//   - the frame that crossed XOFF, which lands in the headroom when the shared pool had no room.
// So  headroom = rate x (2 x propagation + forwarding latency + response time)
//              + 3 x maximum frame + lossless classes x PAUSE frame.
// Frames after the crossing one follow it back to back on the wire, so no partial frame is
// counted twice. The IEEE interface (PHY/MAC) delays are not modelled and so not counted.
// Units: bytes, Time (ps), BitRate (bit/s).
#pragma once

#include <cstdint>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

/// Headroom (bytes) of one lossless (ingress port, priority), as in the header.
inline uint64_t pfcHeadroom(BitRate rate, Time propagation, Time forwardingLatency, Time responseTime,
                            uint32_t maxFrame, uint32_t pauseFrame, int losslessClasses) {
  const Time inFlight = propagation + propagation + forwardingLatency + responseTime;
  // Bytes on the wire during inFlight, rounded up.
  const __int128 bits = static_cast<__int128>(inFlight.picos()) * rate.bitsPerSecond();
  const __int128 perByte = static_cast<__int128>(8) * 1'000'000'000'000LL;
  const auto wire = static_cast<uint64_t>((bits + perByte - 1) / perByte);
  return wire + 3ULL * maxFrame + static_cast<uint64_t>(losslessClasses) * pauseFrame;
}

}  // namespace fabricsim
