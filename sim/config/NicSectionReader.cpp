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
  r.checkKeys(m, p,
              {"reorder", "retransmit_timeout", "rto_backoff", "max_rto", "retry_limit", "local_ack_timeout",
               "retry_count", "ack_every", "window", "failover"});
  NicSpec& n = spec.nic;
  r.getChoice(m, p, "reorder", n.reorder, {"strict", "tolerant"});
  r.getInt(m, p, "ack_every", n.ackEvery, 1, 1'000'000);
  r.getBytes(m, p, "window", n.window, false, 0);
  r.getBool(m, p, "failover", n.failover);

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
    r.getInt(m, p, "local_ack_timeout", n.localAckTimeout, 0, 31);
    r.getInt(m, p, "retry_count", n.retryCount, 0, 7);
    return;
  }
  const bool rtoGiven = r.getTime(m, p, "retransmit_timeout", n.retransmitTimeout, Time::ps(1));
  r.getDouble(m, p, "rto_backoff", n.rtoBackoff, 1.0, 16.0);
  if (r.getTime(m, p, "max_rto", n.maxRto, Time::ps(1)) && n.maxRto < n.retransmitTimeout)
    r.error(m["max_rto"], YamlReader::join(p, "max_rto"),
            "expected max_rto >= retransmit_timeout (" + formatTime(n.retransmitTimeout) + "), found " +
                formatTime(n.maxRto));
  else if (rtoGiven && !YamlReader::has(m, "max_rto") && n.maxRto < n.retransmitTimeout)
    n.maxRto = n.retransmitTimeout;  // an initial RTO above the default cap: no backoff room, but valid
  r.getInt(m, p, "retry_limit", n.retryLimit, 0, 255);
}

}  // namespace fabricsim
