// UnmodelledCounters: the result keys of each group of counters, and nulling them.
#include "sim/runtime/UnmodelledCounters.h"

#include "sim/core/Error.h"

namespace fabricsim {

std::vector<std::string> UnmodelledCounters::keysFor(const CounterCoverage& m) {
  std::vector<std::string> keys;
  auto add = [&keys](bool modelled, std::initializer_list<const char*> ks) {
    if (!modelled) keys.insert(keys.end(), ks.begin(), ks.end());
  };
  add(m.packets,
      {"summary.packets", "summary.link_transmissions", "summary.peak_packets_in_flight",
       "network.packets_sent", "network.packets_dropped", "network.per_tier.*.packets_dropped",
       "routing.packets_blackholed", "routing.packets_ttl_expired", "routing.packets_lost_dead_links"});
  add(m.nacks, {"network.nacks"});
  add(m.reordering, {"network.out_of_order_packets"});
  add(m.ecnMarks, {"network.ecn_marks", "network.per_tier.*.ecn_marks"});
  add(m.congestionNotifications, {"network.cnps", "network.becns"});
  add(m.pfcFrames, {"network.pfc_pause_frames", "network.pfc_resume_frames", "network.pfc_pause_propagated"});
  add(m.pfcPausedTime, {"network.pfc_paused_us", "network.pfc_paused_ports", "network.pfc_most_paused_ports",
                        "network.per_tier.*.pfc_paused_us"});
  add(m.buffers, {"network.lossless_drops", "network.lossless_violations", "network.pfc_watchdog",
                  "network.pfc_max_headroom_used_bytes", "network.pfc_headroom_peaks"});
  add(m.credits, {"network.min_credit_bytes", "network.credits_outstanding_bytes"});
  add(m.queues,
      {"network.max_queue_bytes", "network.queue_bytes", "network.queue_bytes_by_class", "network.top_queues",
       "network.per_tier.*.max_queue_bytes", "network.per_tier.*.queue_bytes"});
  return keys;
}

namespace {

/// Nulls the key at `parts[i..]` under `node`, every member for a "*".
void nullAt(nlohmann::json& node, const std::vector<std::string>& parts, size_t i, const std::string& key) {
  SIM_CHECK(node.is_object(), "unmodelled counter " + key + ": its parent is not an object");
  if (parts[i] == "*") {
    for (auto& [name, child] : node.items()) nullAt(child, parts, i + 1, key);
    return;
  }
  SIM_CHECK(node.contains(parts[i]), "unmodelled counter " + key + " is not in the results");
  if (i + 1 == parts.size()) {
    node[parts[i]] = nullptr;
  } else {
    nullAt(node[parts[i]], parts, i + 1, key);
  }
}

}  // namespace

void UnmodelledCounters::apply(const CounterCoverage& modelled, nlohmann::json& doc) {
  const std::vector<std::string> keys = keysFor(modelled);
  for (const std::string& key : keys) {
    std::vector<std::string> parts;
    for (size_t from = 0;;) {
      const size_t dot = key.find('.', from);
      parts.push_back(key.substr(from, dot - from));
      if (dot == std::string::npos) break;
      from = dot + 1;
    }
    nullAt(doc, parts, 0, key);
  }
  doc["unmodelled"] = keys;
}

}  // namespace fabricsim
