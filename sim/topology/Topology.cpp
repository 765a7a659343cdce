#include "sim/topology/Topology.h"

#include <unordered_map>

#include "sim/core/Error.h"

namespace fabricsim {

Topology::Topology(int gpusPerHost, int nicsPerHost) : gpusPerHost_(gpusPerHost), nicsPerHost_(nicsPerHost) {
  SIM_CHECK(gpusPerHost > 0 && nicsPerHost > 0, "hosts need at least one GPU and one NIC");
}

NodeId Topology::addHost(std::string name) {
  SIM_CHECK(nodes_.size() == hosts_, "all hosts must be added before the first switch");
  NodeInfo info{NodeKind::Host, 0, -1, -1, std::move(name)};
  boost::add_vertex(info, graph_);
  nodes_.push_back(std::move(info));
  return static_cast<NodeId>(hosts_++);
}

NodeId Topology::addSwitch(std::string name, uint8_t tier, int32_t plane, int32_t pod) {
  SIM_CHECK(tier >= 1, "switch tiers start at 1");
  NodeInfo info{NodeKind::Switch, tier, plane, pod, std::move(name)};
  boost::add_vertex(info, graph_);
  nodes_.push_back(std::move(info));
  if (tier > maxTier_) maxTier_ = tier;
  return static_cast<NodeId>(nodes_.size() - 1);
}

LinkId Topology::addLink(NodeId a, NodeId b, BitRate rate, Time latency, uint8_t tier) {
  SIM_CHECK(!finalized_, "addLink after finalize");
  SIM_CHECK(a < nodes_.size() && b < nodes_.size() && a != b, "bad link endpoints");
  LinkInfo info;
  info.rate = rate;
  info.latency = latency;
  info.tier = tier;
  info.a = a;
  info.b = b;
  boost::add_edge(a, b, info, graph_);
  links_.push_back(info);
  return static_cast<LinkId>(links_.size() - 1);
}

void Topology::finalize() {
  SIM_CHECK(!finalized_, "finalize called twice");
  finalized_ = true;
  const size_t n = nodes_.size();
  std::vector<uint32_t> deg(n, 0);
  for (const auto& l : links_) {
    ++deg[l.a];
    ++deg[l.b];
  }
  portOffset_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) portOffset_[i + 1] = portOffset_[i] + deg[i];
  const size_t ports = portOffset_[n];
  portNode_.resize(ports);
  portLink_.resize(ports);
  peerPort_.resize(ports);
  std::vector<uint32_t> fill(n, 0);
  for (LinkId id = 0; id < links_.size(); ++id) {
    auto& l = links_[id];
    l.aPort = fill[l.a]++;
    l.bPort = fill[l.b]++;
    const PortId pa = portOffset_[l.a] + l.aPort;
    const PortId pb = portOffset_[l.b] + l.bPort;
    portNode_[pa] = l.a;
    portNode_[pb] = l.b;
    portLink_[pa] = id;
    portLink_[pb] = id;
    peerPort_[pa] = pb;
    peerPort_[pb] = pa;
  }
  for (size_t h = 0; h < hosts_; ++h)
    SIM_CHECK(deg[h] == static_cast<uint32_t>(nicsPerHost_),
              "host " + nodes_[h].name + " has " + std::to_string(deg[h]) + " links, expected one per NIC");
}

NodeId Topology::findNode(const std::string& name) const {
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].name == name) return i;
  return kInvalid;
}

}  // namespace fabricsim
