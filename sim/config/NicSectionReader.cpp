#include "sim/config/NicSectionReader.h"

#include <string>
#include <vector>

namespace fabricsim {

void readNicSection(YamlReader& r, const YAML::Node& root, TopologySpec& spec) {
  const bool ib = spec.links.technology == "infiniband";
  spec.nic.reorder = ib ? "tolerant" : "strict";
  if (!YamlReader::has(root, "nic")) return;
  const YAML::Node m = root["nic"];
  const std::string p = "nic";
  if (!r.expectMap(m, p)) return;
  r.checkKeys(m, p);
  NicSpec& n = spec.nic;
  r.read(m, p, "reorder", n.reorder);
  r.read(m, p, "ack_every", n.ackEvery);
  r.read(m, p, "window", n.window);
  r.read(m, p, "failover", n.failover);

  // Each technology's timer keys; the other technology's are refused where they stand.
  const std::vector<const char*> other =
      ib ? std::vector<const char*>{"retransmit_timeout", "rto_backoff", "max_rto", "retry_limit"}
         : std::vector<const char*>{"local_ack_timeout", "retry_count"};
  for (const char* k : other) {
    if (!YamlReader::has(m, k)) continue;
    r.error(
        m[k], YamlReader::join(p, k),
        ib ? "applies to RoCEv2 NICs, not to links.technology 'infiniband': InfiniBand NICs time out after "
             "the local ACK timeout; set nic.local_ack_timeout (N: 4.096 us x 2^N) and nic.retry_count"
           : "applies to InfiniBand NICs, not to links.technology 'roce': RoCEv2 NICs use "
             "nic.retransmit_timeout (initial RTO), nic.rto_backoff, nic.max_rto and nic.retry_limit");
  }
  if (ib) {
    r.read(m, p, "local_ack_timeout", n.localAckTimeout);
    r.read(m, p, "retry_count", n.retryCount);
    return;
  }
  const bool rtoGiven = r.read(m, p, "retransmit_timeout", n.retransmitTimeout);
  r.read(m, p, "rto_backoff", n.rtoBackoff);
  if (r.read(m, p, "max_rto", n.maxRto) && n.maxRto < n.retransmitTimeout)
    r.error(m["max_rto"], YamlReader::join(p, "max_rto"),
            "expected max_rto >= retransmit_timeout (" + formatTime(n.retransmitTimeout) + "), found " +
                formatTime(n.maxRto));
  else if (rtoGiven && !YamlReader::has(m, "max_rto") && n.maxRto < n.retransmitTimeout)
    n.maxRto = n.retransmitTimeout;  // an initial RTO above the default cap: no backoff room, but valid
  r.read(m, p, "retry_limit", n.retryLimit);
}

}  // namespace fabricsim
