#include "sim/config/IbSmSectionReader.h"

#include <string>

namespace fabricsim {

void readIbSmSection(YamlReader& r, const YAML::Node& root, TopologySpec& spec) {
  YAML::Node routing;
  if (YamlReader::has(root, "routing") && root["routing"].IsMap()) routing = root["routing"];
  const bool ib = spec.links.technology == "infiniband";
  RoutingSpec& rs = spec.routing;
  IbSmSpec& sm = rs.ibSm;
  YAML::Node m;
  const std::string p = "routing.ib_sm";
  if (routing.IsDefined() && YamlReader::has(routing, "ib_sm")) {
    m = routing["ib_sm"];
    if (!r.expectMap(m, p)) m = YAML::Node();
  }
  if (m.IsDefined()) {
    r.checkKeys(m, p);
    r.read(m, p, "engine", sm.engine);
    r.read(m, p, "lmc", sm.lmc);
    r.read(m, p, "adaptive", sm.adaptive);
    r.read(m, p, "reroute_delay", sm.rerouteDelay);
  }

  const bool algorithmGiven = routing.IsDefined() && YamlReader::has(routing, "algorithm");
  const std::string ap = "routing.algorithm";
  if (ib && rs.controlPlane == "bgp") {
    const bool viaAlgorithm = algorithmGiven && routing["algorithm"].Scalar() == "bgp";
    r.error(
        viaAlgorithm ? routing["algorithm"] : routing["control_plane"],
        viaAlgorithm ? ap : std::string("routing.control_plane"),
        "BGP is an Ethernet/IP control plane; InfiniBand switches forward by destination LID from the subnet "
        "manager's tables: use routing.algorithm: ib-sm (the default on links.technology: infiniband)");
    return;
  }
  if (ib && !algorithmGiven) rs.algorithm = "ib-sm";
  if (ib && rs.algorithm != "ib-sm")
    r.error(routing["algorithm"], ap,
            "'" + rs.algorithm +
                "' selects among Ethernet ECMP paths by a five-tuple hash; InfiniBand switches forward by "
                "destination LID from the subnet manager's tables: use ib-sm (--routing ib-sm; "
                "routing.ib_sm.adaptive: true "
                "for InfiniBand adaptive routing)");
  if (!ib && rs.algorithm == "ib-sm")
    r.error(routing["algorithm"], ap,
            "ib-sm is InfiniBand subnet-manager routing: it needs links.technology: infiniband, found '" +
                spec.links.technology + "'");
  if (rs.algorithm == "ib-sm" && routing.IsDefined()) {
    // Settings of Ethernet switches' ECMP tables: nothing on an InfiniBand fabric honours them.
    for (const char* k :
         {"hash_fields", "seeds", "resilient_hashing", "wcmp", "local_failover", "failover_delay"})
      if (YamlReader::has(routing, k))
        r.error(
            routing[k], std::string("routing.") + k,
            "sets Ethernet ECMP tables, which an InfiniBand fabric does not have: its switches forward by "
            "destination LID from the subnet manager's tables, which it recomputes after a failure "
            "(routing.ib_sm.reroute_delay; routing.ib_sm.adaptive for switch adaptive routing); remove the "
            "key");
  }
  if (rs.algorithm == "ib-sm" && sm.adaptive && spec.nic.reorder != "tolerant") {
    const bool nicGiven =
        YamlReader::has(root, "nic") && root["nic"].IsMap() && YamlReader::has(root["nic"], "reorder");
    r.error(nicGiven ? root["nic"]["reorder"] : m["adaptive"],
            nicGiven ? std::string("nic.reorder") : p + ".adaptive",
            "InfiniBand adaptive routing sends one QP's packets over several paths, so they arrive out of "
            "order: it "
            "needs nic.reorder: tolerant, found '" +
                spec.nic.reorder + "'");
  }
}

}  // namespace fabricsim
