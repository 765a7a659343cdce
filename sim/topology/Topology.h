// Topology: the physical graph of a cluster: hosts, switches and the links between them.
//
// Models: nodes (hosts and switches, with tier, plane and pod) and full-duplex links (rate,
// propagation latency), held in a Boost.Graph adjacency_list. After finalize() it also offers
// a flat port view for the backends: every node's links are numbered 0..degree-1 in the order
// they were added ("ports"), and every (node, port) pair has a global directed-port index
// (the egress side of that link at that node). Hosts come first: host h is node h, and port r
// of a host is its NIC r. GPU g of host h is global rank h * gpusPerHost + g and uses NIC
// g * nicsPerHost / gpusPerHost.
// Leaves out: NVLink inside hosts (a fluid model in the backends), failures (routing/).
// Units: BitRate in bit/s, Time in ps.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

using NodeId = uint32_t;
using PortId = uint32_t;  ///< global directed-port index
using LinkId = uint32_t;
inline constexpr uint32_t kInvalid = 0xFFFFFFFFu;

enum class NodeKind : uint8_t { Host, Switch };

struct NodeInfo {
  NodeKind kind = NodeKind::Host;
  uint8_t tier = 0;    ///< 0 host, 1 leaf/edge, 2 spine/aggregation, 3 core
  int32_t plane = -1;  ///< rail index for rail-optimized switches; -1 when shared / not railed
  int32_t pod = -1;    ///< fat-tree pod; -1 otherwise
  std::string name;    ///< stable name: host-3, leaf-0, spine-2, edge-1-0, rail2-agg-0-1, core-5
};

struct LinkInfo {
  BitRate rate;
  Time latency;
  uint8_t tier = 0;  ///< 0 host-leaf, 1 leaf-spine / edge-agg, 2 agg-core
  NodeId a = kInvalid, b = kInvalid;
  uint32_t aPort = kInvalid, bPort = kInvalid;  ///< local port numbers at a and b
};

class Topology {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, NodeInfo, LinkInfo>;

  Topology(int gpusPerHost, int nicsPerHost);

  /// Adds a host; all hosts must be added before any switch. Returns its node id.
  NodeId addHost(std::string name);
  NodeId addSwitch(std::string name, uint8_t tier, int32_t plane = -1, int32_t pod = -1);
  /// Adds a full-duplex link. For hosts, the r-th link added is NIC r.
  LinkId addLink(NodeId a, NodeId b, BitRate rate, Time latency, uint8_t tier);
  /// Builds the port view. Must be called once after the last addLink.
  void finalize();

  // ---- graph ----
  const Graph& graph() const { return graph_; }
  size_t nodeCount() const { return nodes_.size(); }
  size_t hostCount() const { return hosts_; }
  size_t switchCount() const { return nodes_.size() - hosts_; }
  size_t linkCount() const { return links_.size(); }
  const NodeInfo& node(NodeId n) const { return nodes_[n]; }
  const LinkInfo& link(LinkId l) const { return links_[l]; }
  bool isHost(NodeId n) const { return n < hosts_; }
  /// Node id by name, or kInvalid.
  NodeId findNode(const std::string& name) const;

  // ---- hosts, GPUs, NICs ----
  int gpusPerHost() const { return gpusPerHost_; }
  int nicsPerHost() const { return nicsPerHost_; }
  size_t gpuCount() const { return hosts_ * static_cast<size_t>(gpusPerHost_); }
  size_t nicCount() const { return hosts_ * static_cast<size_t>(nicsPerHost_); }
  NodeId hostOfGpu(uint32_t gpu) const { return gpu / static_cast<uint32_t>(gpusPerHost_); }
  /// Global NIC index used by GPU `gpu` (host * nicsPerHost + local NIC).
  uint32_t nicOfGpu(uint32_t gpu) const {
    const uint32_t h = hostOfGpu(gpu);
    const uint32_t local = (gpu % gpusPerHost_) * nicsPerHost_ / gpusPerHost_;
    return h * nicsPerHost_ + local;
  }
  NodeId hostOfNic(uint32_t nic) const { return nic / static_cast<uint32_t>(nicsPerHost_); }
  uint32_t localNic(uint32_t nic) const { return nic % static_cast<uint32_t>(nicsPerHost_); }
  /// Directed port of NIC `nic` (its egress toward the fabric).
  PortId nicPort(uint32_t nic) const { return portOffset_[hostOfNic(nic)] + localNic(nic); }
  /// The switch a NIC is cabled to.
  NodeId attachedSwitch(uint32_t nic) const { return peerNode(nicPort(nic)); }

  // ---- ports (valid after finalize) ----
  uint32_t degree(NodeId n) const { return portOffset_[n + 1] - portOffset_[n]; }
  PortId port(NodeId n, uint32_t local) const { return portOffset_[n] + local; }
  size_t portCount() const { return portNode_.size(); }
  NodeId portNode(PortId p) const { return portNode_[p]; }
  uint32_t portLocal(PortId p) const { return p - portOffset_[portNode_[p]]; }
  LinkId portLink(PortId p) const { return portLink_[p]; }
  /// The directed port at the other end of p's link (its reverse direction).
  PortId peerPort(PortId p) const { return peerPort_[p]; }
  NodeId peerNode(PortId p) const { return portNode_[peerPort_[p]]; }
  BitRate portRate(PortId p) const { return links_[portLink_[p]].rate; }
  Time portLatency(PortId p) const { return links_[portLink_[p]].latency; }

  /// Highest switch tier present (2 for leaf-spine, 3 for fat-tree).
  int tiers() const { return maxTier_; }

 private:
  Graph graph_;
  std::vector<NodeInfo> nodes_;  // copy of vertex properties, for cache-friendly access
  std::vector<LinkInfo> links_;
  size_t hosts_ = 0;
  int gpusPerHost_;
  int nicsPerHost_;
  int maxTier_ = 0;
  bool finalized_ = false;
  std::vector<uint32_t> portOffset_;  // size nodeCount+1
  std::vector<NodeId> portNode_;
  std::vector<LinkId> portLink_;
  std::vector<PortId> peerPort_;
};

}  // namespace fabricsim
