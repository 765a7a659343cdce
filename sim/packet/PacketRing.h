// PacketRing: the growable FIFO (sim/core/Ring.h) of small records for egress queues, the packets
// on a link and a NIC's turn list, starting at 4 entries.
//
// Models: nothing physical; it keeps the per-hop bookkeeping (packet index, size, arrival time)
// next to the port, so moving a packet along touches the packet itself only where its headers
// are read (at the receiving switch or NIC).
#pragma once

#include <cstdint>

#include "sim/core/Ring.h"

namespace fabricsim {

template <typename T>
using PacketRing = Ring<T, 4>;

}  // namespace fabricsim
