// NicSectionReader: the `nic:` section of a topology file (RC transport settings of every NIC).
//
// Models: the keys, their types, units and ranges, and which transport timer keys apply to
// which link technology: RoCEv2 NICs take `retransmit_timeout` (initial RTO), `rto_backoff`,
// `max_rto` and `retry_limit`; InfiniBand NICs take `local_ack_timeout` (the IBTA exponent N of
// 4.096 us x 2^N, 0 = infinite) and `retry_count` (0..7). A key of the other technology is an
// error naming the keys that apply, never silently ignored.
// Leaves out: the timer behaviour itself (sim/packet/Nic).
// Units: Time in ps.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/config/TopologySpec.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

/// Reads root["nic"] (if present) into spec.nic, after spec.links.technology is known; records
/// every problem in `r`. Sets the technology's default receiver (`reorder`) first.
void readNicSection(YamlReader& r, const YAML::Node& root, TopologySpec& spec);

}  // namespace fabricsim
