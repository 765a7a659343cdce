// TopologySpec: the value-type description of a cluster read from a topology YAML file.
//
// Models: every key of the topology file (DESIGN.md section 5) after validation, with units
// resolved (BitRate in bit/s, Time in ps, Bytes). No behaviour: builders in sim/topology and
// the backends read it. Defaults are the values a field holds when the file omits the key.
// Leaves out: workload settings (see WorkloadSpec).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

enum class TopologyKind { LeafSpine, FatTree, RailOptimized };

/// Two-tier leaf-spine. Every leaf connects to every spine with links_per_spine links.
struct LeafSpineShape {
  int leaves = 0;
  int spines = 0;
  int hostsPerLeaf = 0;
  int linksPerSpine = 1;
};

/// Three-tier k-ary fat-tree (Al-Fares et al.). pods defaults to radix (the full tree);
/// fewer pods build a partial tree with the same per-switch wiring. hostsPerEdge defaults
/// to radix/2 (non-blocking); more hosts per edge oversubscribe the edge tier.
struct FatTreeShape {
  int radix = 0;
  int pods = 0;
  int hostsPerEdge = 0;
};

/// Rail-optimized: each host has `rails` NICs; NIC r of every host attaches to rail r, and
/// each rail is its own leaf-spine or fat-tree. With sharedSpines the top tier (spines, or
/// fat-tree cores) is one set shared by all rails.
struct RailShape {
  int rails = 0;
  TopologyKind railKind = TopologyKind::LeafSpine;
  LeafSpineShape leafSpine;
  FatTreeShape fatTree;
  bool sharedSpines = false;
};

struct HostSpec {
  int gpusPerHost = 1;
  int nicsPerHost = 1;                                            ///< default: gpusPerHost
  BitRate nvlinkBandwidth = BitRate::bps(450LL * 8'000'000'000);  ///< per GPU, one direction
  Time nvlinkLatency = Time::ns(1000);
};

struct LinkSpec {
  std::string technology = "roce";  ///< roce | infiniband
  BitRate hostSpeed = BitRate::gbps(100);
  BitRate fabricSpeed = BitRate::gbps(100);
  /// Optional per-tier overrides of fabricSpeed: [tier1 (leaf-spine / edge-agg), tier2 (agg-core)].
  std::vector<BitRate> tierSpeeds;
  Time latency = Time::ns(1000);  ///< propagation per link
  Bytes mtu = 4096;               ///< payload bytes per packet
};

/// RED-style ECN marking at switch egress, per traffic-class queue (each queue compared with its
/// own length): no mark below kmin, probability rising linearly to pmax at kmax, every packet
/// above kmax. On InfiniBand links the same thresholds drive FECN marking (IB CC).
struct EcnSpec {
  bool enabled = false;
  Bytes kmin = 0;
  Bytes kmax = 0;
  double pmax = 0.0;
  bool markOnDequeue = false;  ///< `mark_on: enqueue | dequeue` (default enqueue)
  uint8_t classMask = 0x7F;    ///< `classes: [..]`: traffic classes that mark (default data classes 0-6)
};

/// Priority flow control (IEEE 802.1Qbb) for RoCEv2 switches and NICs.
struct PfcSpec {
  bool enabled = false;
  Bytes xoff = 0;  ///< static XOFF threshold per (ingress port, priority)
  Bytes xon = 0;   ///< static XON threshold
  /// > 0: dynamic thresholds: XOFF = dynamicAlpha x free shared buffer, XON = XOFF - xonDelta.
  double dynamicAlpha = 0.0;
  Bytes xonDelta = 0;  ///< dynamic mode; 0 = two MTU-sized frames
  Bytes headroom = 0;  ///< per (ingress port, priority); 0 = the IEEE 802.1Qbb budget of the port's link
  int quanta = 65535;  ///< pause time in 512-bit-time quanta carried by each PAUSE
  /// How long after a PAUSE arrives the receiving MAC stops (0: at once, as ns-3 and htsim model
  /// it; IEEE 802.3 Annex 31B allows up to 394 quanta at 100 Gb/s). Counted in the headroom.
  Time responseTime = Time::zero();
  /// PFC storm watchdog (off when detection is 0): an egress class paused without a break for
  /// `stormDetection` stops honouring PAUSE and drops its packets, until no PAUSE has arrived for
  /// `stormRestoration` (SONiC / switch-vendor PFC watchdog, action drop).
  Time stormDetection = Time::zero();
  Time stormRestoration = Time::zero();
  uint8_t classMask = 0x7F;  ///< `classes: [..]`: lossless traffic classes (default 0-6)
};

struct SwitchSpec {
  Bytes buffer = 32LL * 1024 * 1024;  ///< packet buffer per switch (reserves + headroom + shared pool)
  /// Minimum guarantee per ingress port (its packets of any class use it first), carved out
  /// before the shared pool; -1 = one maximum frame.
  Bytes reserve = -1;
  Time latency = Time::zero();  ///< forwarding latency, added once per switch traversal
  double dtAlpha = 1.0;         ///< dynamic threshold: queue may hold alpha x free buffer
  EcnSpec ecn;
  PfcSpec pfc;
  /// InfiniBand: receive buffer per (input port, virtual lane) advertised as credits;
  /// 0 = the switch buffer divided evenly among its ports.
  Bytes creditBuffer = 0;
};

/// RFC 7938 eBGP control plane settings.
struct BgpSpec {
  /// rfc7938: every leaf its own ASN, the spine/aggregation switches of a pod (or of a
  /// leaf-spine cluster) share one ASN, all cores (top tier) share one ASN;
  /// unique: every switch its own ASN.
  std::string asnScheme = "rfc7938";
  Time updateDelay = Time::us(50);  ///< processing delay of one received UPDATE
  Time mrai = Time::zero();         ///< min route advertisement interval per neighbour (0: at once)
  std::string detection = "bfd";    ///< bfd (interval x multiplier) | los (loss of light: at once)
  /// BFD (RFC 5880) detection time = interval x multiplier. RFC 5880 leaves the timers to the
  /// operator; the default is FRRouting bfdd's (300 ms transmit/receive, multiplier 3, as SONiC
  /// switches run it): 900 ms. Data-centre fabrics run 100-300 ms x 3; BFD offloaded to
  /// hardware 3.3 ms x 3 (`bfd_interval: 3300us`).
  Time bfdInterval = Time::ms(300);
  int bfdMultiplier = 3;
};

/// InfiniBand subnet-manager routing (`routing.algorithm: ib-sm`, keys under `routing.ib_sm`).
/// Source of the reroute default: README, "InfiniBand routing".
struct IbSmSpec {
  /// auto (ftree on a Clos fabric, updn otherwise) | ftree | dmodk | updn
  std::string engine = "auto";
  int lmc = 0;            ///< 2^lmc LIDs per NIC port (0..7)
  bool adaptive = false;  ///< switch adaptive routing among the minimal ports of a DLID
  /// From a topology change to the new tables being installed (trap, heavy sweep, LFT upload):
  /// Mellanox quotes 10-20 s for a very large fabric; the lower end is the default.
  Time rerouteDelay = Time::ms(10'000);
};

struct RoutingSpec {
  /// Path selection among equal-cost members (README "Routing", one meaning on every backend):
  /// ecmp (per flow, five-tuple hash) | flowlet (per flowlet, the least-loaded member at each
  /// flowlet start) | adaptive (per packet, the least-loaded member) | spray (per packet, any).
  /// | ib-sm (InfiniBand: destination-LID tables from the subnet manager; the default there).
  /// `bgp` is accepted as ecmp over BGP-derived tables (control_plane: bgp).
  std::string algorithm = "ecmp";
  /// Where forwarding tables come from: static (shortest paths computed from the graph) | bgp.
  std::string controlPlane = "static";
  uint64_t hashSeed = 0;          ///< mixed with each switch's id to give per-switch seeds
  Time flowletGap = Time::us(5);  ///< flowlet: idle gap that starts a new flowlet
  Bytes adaptiveBias = 0;         ///< adaptive: keep the hashed port unless another is this much emptier
  /// adaptive: queues are compared in units of this many bytes (0 = eight maximum frames), the way
  /// switch ASICs grade port load into a few bands rather than comparing exact byte counts.
  Bytes adaptiveQuantum = 0;
  std::string spray = "random";  ///< spray: random | round-robin
  /// Header fields the switches hash (src_ip, dst_ip, protocol, src_port, dst_port); without
  /// src_port, the RoCEv2 UDP source port's per-QP entropy is ignored.
  std::vector<std::string> hashFields = {"src_ip", "dst_ip", "protocol", "src_port", "dst_port"};
  std::string seeds = "per_switch";  ///< per_switch | equal (equal: hash polarisation across tiers)
  int resilientBuckets = 0;          ///< resilient hashing: buckets per ECMP group; 0 = off
  bool wcmp = false;                 ///< weighted ECMP: member weights by capacity toward the destination
  /// Local fast failover (Ethernet tables): a switch takes a dead port out of its groups
  /// `failoverDelay` after the link changes (carrier loss), before and whatever BGP does.
  bool localFailover = true;
  Time failoverDelay = Time::us(10);
  BgpSpec bgp;
  IbSmSpec ibSm;
};

/// The RC transport of the NICs. The retransmission timer depends on the link technology:
/// RoCEv2 NICs start at `retransmitTimeout` and multiply it by `rtoBackoff` at each consecutive
/// timeout up to `maxRto` (ConnectX adaptive retransmission); InfiniBand NICs wait the IBTA local
/// ACK timeout 4.096 us x 2^localAckTimeout each time. Either fails the QP on the timeout after
/// `retryLimit` / `retryCount` retries without progress. Sources of the defaults: README, "NIC".
struct NicSpec {
  std::string reorder = "strict";           ///< strict: go-back-N on a gap
  Time retransmitTimeout = Time::us(1000);  ///< RoCEv2: initial (and minimum) RTO
  double rtoBackoff = 2.0;                  ///< RoCEv2: RTO multiplier per consecutive timeout (1: fixed)
  /// RoCEv2: RTO cap; default the QP local ACK timeout NCCL sets (NCCL_IB_TIMEOUT 20: 4.096 us x 2^20)
  Time maxRto = Time::ps(4'096'000LL << 20);
  int retryLimit = 7;        ///< RoCEv2: retransmissions after consecutive timeouts before the QP fails
  int localAckTimeout = 20;  ///< InfiniBand: exponent N of 4.096 us x 2^N (0..31; 0 = infinite)
  int retryCount = 7;        ///< InfiniBand: retry_cnt (0..7)
  int ackEvery = 1;          ///< one ACK per this many in-order data packets (and at message end)
  Bytes window = 0;          ///< max unacknowledged payload bytes per QP; 0 = unlimited
  /// A connection whose NIC (or the NIC's host link) is down moves to another NIC of the same
  /// host at its next retransmission timeout (multi-rail / bonded NICs); false: it retries until
  /// it fails, as NCCL, which aborts on a completion error, sees it.
  bool failover = false;
};

/// DCQCN reaction-point and notification-point parameters, for one of two state machines:
/// `paper` (Zhu et al., SIGCOMM 2015; sim/cc/Dcqcn.h) or `mlx` (ConnectX firmware as the HPCC ns-3
/// reference models it; sim/cc/DcqcnMlx.h). Presets: `dcqcn-paper` (variant paper) and `connectx`
/// (variant mlx); see sim/config/DcqcnPresets.cpp for values and sources.
struct DcqcnSpec {
  std::string preset =
      "dcqcn-paper";              ///< the defaults below are the paper preset; the loader applies presets
  std::string variant = "paper";  ///< paper | mlx: which reaction-point state machine runs
  double g = 1.0 / 256;           ///< alpha gain: alpha = (1-g) alpha + g per CNP (mlx: per CNP tick)
  double initialAlpha = 1.0;
  Time alphaTimer = Time::us(55);          ///< alpha decays by (1-g) each period without a CNP (mlx: a grid)
  Time rateIncreaseTimer = Time::us(55);   ///< T: a rate-increase event each period
  Bytes byteCounter = 10LL * 1000 * 1000;  ///< B: a rate-increase event each B bytes sent (0: off)
  int fastRecoveryStages = 5;              ///< F
  BitRate additiveIncrease = BitRate::bps(40'000'000);  ///< R_AI
  BitRate hyperIncrease = BitRate::bps(400'000'000);    ///< R_HAI
  BitRate minRate = BitRate::bps(10'000'000);
  Time rateReduceInterval = Time::zero();         ///< mlx: the decrease grid (> 0); paper: 0, every CNP cuts
  double maxDecreaseFraction = 0.5;               ///< a single decrease cuts at most this fraction
  bool clampTargetRate = true;                    ///< target = current on every decrease
  bool clampTargetRateAfterTimeIncrease = false;  ///< target = current on a decrease after a timer increase
  BitRate rateOnFirstCnp = BitRate::bps(0);       ///< 0: the first CNP decreases like any other
  Time cnpInterval = Time::us(50);                ///< NP: at most one CNP per QP per interval
};

/// InfiniBand congestion control (IBTA annex A10), simplified: switches mark FECN above the ECN
/// thresholds, the receiver returns a BECN, the sender raises its CCT index by `cctiIncrease`
/// (up to `cctiLimit`) and lowers it by one every `cctiTimer`; CCT[i] is an inter-packet delay of
/// i / cctScale packet times, so the injection rate is line / (1 + i / cctScale).
struct IbCcSpec {
  int cctiIncrease = 1;
  int cctiLimit = 127;
  Time cctiTimer = Time::us(10);
  double cctScale = 8.0;
  Time becnInterval = Time::us(0);  ///< receiver: at most one BECN per QP per interval (0 = every FECN)
};

struct CongestionControlSpec {
  std::string algorithm = "none";  ///< none | dcqcn (RoCEv2) | ibcc (InfiniBand)
  DcqcnSpec dcqcn;
  IbCcSpec ibcc;
};

struct FailureSpec {
  Time at;
  std::string action;             ///< down | up | flap (link, switch, nic) | pfc-storm | pfc-storm-end (host)
  std::vector<std::string> link;  ///< two node names, when a link fails (a host link: host and switch)
  std::string node;               ///< a switch name, when a switch fails
  std::string nicHost;            ///< `nic: host-3/1`: the host of the NIC that fails ("" otherwise)
  int nicIndex = -1;              ///< `nic: host-3/1`: its local NIC index (1)
  std::string host;               ///< a host whose NICs start or stop a PFC storm
  Time downFor;                   ///< flap: how long each down lasts
  Time upFor;                     ///< flap: how long each up lasts before the next down
  int count = 1;                  ///< flap: how many down-up cycles
  int line = 0;                   ///< where it was given, for later diagnostics
};

/// Run-time checks of the packet backend that end a run which can no longer finish.
struct WatchdogSpec {
  Time interval = Time::ms(1);  ///< how often the checks run (while packets are in the fabric)
  /// Stop when this long passes with packets queued and no data delivered (0: off).
  Time noProgress = Time::ms(10);
  bool pfcDeadlock = true;  ///< stop on a cycle of PFC-paused ports that persists a whole interval
};

/// The hybrid backend's congestion episodes (README "The hybrid backend").
struct EpisodeSpec {
  /// Packet-level simulations of each distinct episode, each with its own seed; the run uses
  /// their mean (>= replicas).
  int seeds = 8;
  /// Groups the seeds are split into, each giving one rerun of the flow level whose spread is
  /// the results' confidence interval (1: no interval; at most seeds).
  int replicas = 3;
  /// Fixed point of the coupling between episodes and the rate solve: the rounds of a
  /// recomputation stop once no link's capacity moves by more than this fraction of its
  /// nominal capacity from one round to the next (> 0).
  double tolerance = 0.01;
  /// Rounds per recomputation at most; one that has not converged by then keeps its last
  /// round's capacities and is counted in the results (>= 1).
  int maxRounds = 32;
  bool given = false;  ///< the file or --set had an `episodes` section (other backends warn)
};

struct TopologySpec {
  std::string file;                       ///< path it was read from ("" for in-memory specs)
  std::vector<std::string> setOverrides;  ///< the --set assignments applied on top of the file
  std::string name;
  TopologyKind kind = TopologyKind::LeafSpine;
  LeafSpineShape leafSpine;
  FatTreeShape fatTree;
  RailShape rail;
  HostSpec hosts;
  LinkSpec links;
  SwitchSpec sw;
  RoutingSpec routing;
  NicSpec nic;
  CongestionControlSpec congestionControl;
  std::vector<FailureSpec> failures;
  WatchdogSpec watchdog;
  EpisodeSpec episodes;
  std::string workload;  ///< default workload path, resolved relative to the topology file

  /// Rate of links between tier t and t+1 (t = 0: host to leaf).
  BitRate tierSpeed(int tier) const {
    if (tier == 0) return links.hostSpeed;
    if (tier - 1 < static_cast<int>(links.tierSpeeds.size())) return links.tierSpeeds[tier - 1];
    return links.fabricSpeed;
  }
};

const char* toString(TopologyKind k);

}  // namespace fabricsim
