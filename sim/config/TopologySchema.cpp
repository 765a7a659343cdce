// The topology file's keys (DESIGN.md section 5): what TopologyLoader and its section readers
// accept, with the ranges they enforce. Ranges of sizes are in bytes, of times in seconds, of
// rates in bit/s.
#include "sim/config/DcqcnPresets.h"
#include "sim/config/Schema.h"
#include "sim/config/SchemaKeys.h"

namespace fabricsim {
namespace {

using namespace schemakeys;

std::vector<KeySpec> shapeKeys(const std::string& at, const std::string& kindKey) {
  using K = KeyType;
  const std::string ls = kindKey + ": leaf-spine", ft = kindKey + ": fat-tree";
  return {
      required(key(at + ".leaves", K::Int, "", "leaf switches", 1, 1e6, "", ls)),
      required(key(at + ".spines", K::Int, "", "spine switches; every leaf connects to every spine", 1, 1e6, "", ls)),
      required(key(at + ".hosts_per_leaf", K::Int, "", "hosts under each leaf", 1, 1e6, "", ls)),
      key(at + ".links_per_spine", K::Int, "1", "parallel links between each leaf and each spine", 1, 1024, "", ls),
      required(key(at + ".radix", K::Int, "", "k, the switch radix of a k-ary fat-tree (even)", 2, 1024, "", ft)),
      key(at + ".pods", K::Int, "radix", "pods built (fewer than k: a partial tree)", 1, 1024, "", ft),
      key(at + ".hosts_per_edge", K::Int, "radix / 2", "hosts under each edge switch (more than k/2 oversubscribes)",
          1, 1e6, "", ft),
  };
}

std::vector<KeySpec> topologyKeys() {
  using K = KeyType;
  std::vector<KeySpec> k{
      key("name", K::String, "the file's stem", "scenario name"),
      required(key("topology", K::Map, "",
                   "the fabric's shape; at most 262,144 GPUs, 262,144 hosts, 4,194,304 links")),
      required(
          choice("topology.kind", {"leaf-spine", "fat-tree", "rail-optimized"}, "",
                 "the fabric's shape; at most 262,144 GPUs, 262,144 hosts and 4,194,304 links (2.6 times the "
                 "100K-GPU fabrics fabricsim is built for; a larger fabric is an error at load)")),
  };
  for (auto& s : shapeKeys("topology", "topology.kind")) k.push_back(std::move(s));
  const std::string rail = "topology.kind: rail-optimized";
  k.push_back(required(key("topology.rails", K::Int, "", "rails: NIC r of every host attaches to rail r", 1, 64, "", rail)));
  k.push_back(required(key("topology.rail", K::Map, "", "the shape of each rail (a leaf-spine or a fat-tree)", kNone,
                           kNone, "", rail)));
  k.push_back(key("topology.shared_spines", K::Bool, "false", "all rails share the top tier (spines or cores)", kNone,
                  kNone, "", rail));
  k.push_back(required(choice("topology.rail.kind", {"leaf-spine", "fat-tree"}, "", "each rail's shape", rail)));
  for (auto& s : shapeKeys("topology.rail", "topology.rail.kind")) k.push_back(std::move(s));
  std::vector<KeySpec> rest{
      key("hosts", K::Map, "", "the hosts"),
      key("hosts.gpus_per_host", K::Int, "1 (rails on rail-optimized)",
          "GPUs per host; GPU g of host h is rank h*G+g", 1, 1024),
      key("hosts.nics_per_host", K::Int, "gpus_per_host", "NICs per host; GPU g uses NIC g*N/G", 1, 1024),
      key("hosts.nvlink", K::Map, "", "NVLink between the GPUs of a host"),
      above(key("hosts.nvlink.bandwidth", K::Rate, "450GBps",
                "per-GPU NVLink egress bandwidth (transfers between the GPUs of a host)", 0, kNone, "bit/s")),
      key("hosts.nvlink.latency", K::Time, "1us", "NVLink latency", 0, kNone, "s"),
      key("links", K::Map, "", "links"),
      choice("links.technology", {"roce", "infiniband"}, "roce",
             "RoCEv2 over Ethernet, or InfiniBand (IB framing, credit flow control)"),
      above(key("links.host_speed", K::Rate, "100Gbps", "NIC-to-leaf rate", 0, kNone, "bit/s")),
      above(key("links.fabric_speed", K::Rate, "100Gbps", "switch-to-switch rate", 0, kNone, "bit/s")),
      key("links.tier_speeds", K::List, "",
          "per-tier overrides of fabric_speed: [t1, t2], tier 1 = leaf-spine or edge-agg, tier 2 = agg-core"),
      key("links.latency", K::Time, "1us", "propagation delay per link", 0, kNone, "s"),
      bare(key("links.mtu", K::Bytes, "4096", "payload bytes per packet (a bare integer is allowed)", 64,
               1048576, "bytes")),
      key("switch", K::Map, "", "switches"),
      key("switch.buffer", K::Bytes, "32MiB",
          "packet buffer per switch: port reserves and PFC headroom are carved out of it first, the rest is "
          "the shared pool",
          1, kNone, "bytes"),
      key("switch.reserve", K::Bytes, "one maximum frame",
          "minimum guarantee per ingress port, used first by its packets of any class", 0, kNone, "bytes"),
      key("switch.latency", K::Time, "0ns", "forwarding latency per switch traversal", 0, kNone, "s"),
      above(
          key("switch.dt_alpha", K::Double, "1.0",
              "lossy classes' dynamic threshold: an egress class queue may hold alpha x the free shared pool",
              0, 1e6)),
      key("switch.credit_buffer", K::Bytes, "buffer / ports",
          "InfiniBand: receive buffer per (input port, virtual lane) advertised as credits", 0, kNone,
          "bytes"),
      key("switch.ecn", K::Map, "off",
          "RED marking per class queue: none at or below kmin, linear to pmax at kmax, all above kmax"),
      key("switch.ecn.enabled", K::Bool, "true", "marking on"),
      key("switch.ecn.kmin", K::Bytes, "", "no marking at or below kmin (required when enabled)", 0, kNone,
          "bytes"),
      key("switch.ecn.kmax", K::Bytes, "",
          "marking probability pmax at kmax, all above (required when enabled)", 0, kNone, "bytes"),
      key("switch.ecn.pmax", K::Double, "", "marking probability at kmax (required when enabled)", 0, 1),
      choice("switch.ecn.mark_on", {"enqueue", "dequeue"}, "enqueue", "when the queue is compared"),
      key("switch.ecn.classes", K::List, "0-6", "classes that mark (FECN on InfiniBand)"),
      key("switch.pfc", K::Map, "off",
          "PFC per (ingress port, priority): XOFF when the priority's shared-pool bytes reach xoff (static) "
          "or dynamic_alpha x the free shared pool, XON at xon or XOFF - xon_delta"),
      key("switch.pfc.enabled", K::Bool, "true", "PFC on"),
      key("switch.pfc.xoff", K::Bytes, "",
          "static XOFF threshold of a priority's shared-pool bytes (> 0 unless dynamic_alpha is set)", 0,
          kNone, "bytes"),
      key("switch.pfc.xon", K::Bytes, "", "static XON threshold", 0, kNone, "bytes"),
      above(key("switch.pfc.dynamic_alpha", K::Double, "", "dynamic XOFF: alpha x the free shared pool", 0,
                1e6)),
      key("switch.pfc.xon_delta", K::Bytes, "", "dynamic XON: XOFF - xon_delta", 0, kNone, "bytes"),
      key("switch.pfc.headroom", K::Bytes, "IEEE 802.1Qbb budget of the port's link",
          "headroom per (port, lossless priority); unset: the IEEE 802.1Qbb budget of the port's link "
          "(README, The model)",
          0, kNone, "bytes"),
      key("switch.pfc.quanta", K::Int, "65535",
          "pause quanta (512-bit times, at least enough for two maximum frames), refreshed every half pause",
          1, 65535),
      key("switch.pfc.response_time", K::Time, "0ns", "how long after a PAUSE arrives the peer stops", 0,
          kNone, "s"),
      key("switch.pfc.classes", K::List, "0-6",
          "lossless classes; every lossless class gets its own headroom on every port: make only the classes "
          "your traffic uses lossless"),
      key("switch.pfc.storm_watchdog", K::Map, "off",
          "PFC storm watchdog: an egress class paused without a break for `detection` ignores PAUSE and "
          "drops its packets until no PAUSE has come for `restoration`"),
      required(above(key("switch.pfc.storm_watchdog.detection", K::Time, "",
                         "an egress class paused without a break this long ignores PAUSE and drops", 0, kNone,
                         "s"))),
      required(above(key("switch.pfc.storm_watchdog.restoration", K::Time, "",
                         "until no PAUSE has come for this long", 0, kNone, "s"))),
      key("routing", K::Map, "", "path selection and control plane"),
      choice("routing.algorithm", {"ecmp", "bgp", "adaptive", "flowlet", "spray", "ib-sm"},
             "ecmp; ib-sm on infiniband",
             "path selection among equal-cost members: ecmp (per flow), flowlet (per flowlet), adaptive (per "
             "packet, least loaded), spray (per packet); bgp = ecmp with control_plane: bgp; ib-sm, the "
             "subnet manager's tables, on InfiniBand"),
      choice("routing.control_plane", {"static", "bgp"}, "static",
             "static (shortest paths from the graph) or bgp (tables from an RFC 7938 eBGP control plane)"),
      key("routing.hash_seed", K::Int, "0", "hash seed mixed into every switch's seed", 0),
      above(key("routing.flowlet_gap", K::Time, "5us", "idle gap that starts a new flowlet", 0, kNone, "s")),
      key("routing.adaptive_bias", K::Bytes, "0",
          "adaptive: keep the hashed port unless another is this much emptier (packet backend only)", 0,
          kNone, "bytes"),
      key("routing.adaptive_quantum", K::Bytes, "8 frames", "load grade of adaptive and flowlet choices", 0,
          kNone, "bytes"),
      choice("routing.spray", {"random", "round-robin"}, "random", "how spray picks a member"),
      key("routing.hash_fields", K::List, "all five",
          "header fields the switches hash, from src_ip, dst_ip, protocol, src_port, dst_port; without "
          "src_port (the RoCEv2 UDP source port, the per-QP entropy) every QP between two NICs takes one "
          "path"),
      choice("routing.seeds", {"per_switch", "equal"}, "per_switch",
             "per_switch (every switch hashes with its own seed) or equal (one seed everywhere: consecutive "
             "tiers make the same choice, the hash polarisation real fabrics suffer)"),
      key("routing.resilient_hashing", K::Bool, "false",
          "true (256 buckets per group), false, or {buckets: N}: each group of two or more members is a "
          "bucket table; a member that leaves gives up only its buckets, spread evenly over the others, and "
          "one that comes back takes a fair share back. Off: a group change rehashes over the new member "
          "count, moving many flows"),
      key("routing.resilient_hashing.buckets", K::Int, "256", "buckets per group", 64, 4096),
      key("routing.wcmp", K::Bool, "false",
          "weighted ECMP: each member's share of the group is its capacity toward the destination leaf, "
          "min(link rate, the next switch's capacity) summed bottom-up, recomputed whenever a group changes; "
          "at most 512 slots per group (resilient: the buckets)"),
      key("routing.local_failover", K::Bool, "true",
          "local fast failover (Ethernet tables): failover_delay after a link goes down or up, the switches "
          "at its ends take the port out of (or back into) every ECMP group in hardware, whatever BGP does; "
          "a switch whose members toward a destination are all dead black-holes it until the control plane "
          "reroutes"),
      key("routing.failover_delay", K::Time, "10us",
          "after a link goes down or up; the default stands for carrier loss (the PHY losing signal, the "
          "ASIC's link scan disabling the port)",
          0, kNone, "s"),
      key("routing.bgp", K::Map, "", "the eBGP control plane"),
      choice("routing.bgp.asn_scheme", {"rfc7938", "unique"}, "rfc7938", "ASN plan"),
      key("routing.bgp.update_delay", K::Time, "50us", "UPDATE processing delay", 0, kNone, "s"),
      key("routing.bgp.mrai", K::Time, "0", "minimum route advertisement interval", 0, kNone, "s"),
      choice("routing.bgp.detection", {"bfd", "los"}, "bfd",
             "failure detection: bfd (interval x multiplier) or los (immediate)"),
      above(key("routing.bgp.bfd_interval", K::Time, "300ms",
                "BFD transmit interval (FRRouting bfdd's default, as SONiC runs it; BFD offloaded to "
                "hardware runs 3300us)",
                0, kNone, "s")),
      key("routing.bgp.bfd_multiplier", K::Int, "3", "BFD detection multiplier", 1, 255),
      key("routing.ib_sm", K::Map, "",
          "InfiniBand subnet manager (routing.algorithm: ib-sm, the default and the only routing on "
          "links.technology: infiniband)"),
      choice("routing.ib_sm.engine", {"auto", "ftree", "dmodk", "updn"}, "auto",
             "subnet-manager routing engine: auto (ftree on a Clos, updn otherwise), ftree, dmodk or updn"),
      key("routing.ib_sm.lmc", K::Int, "0", "2^lmc LIDs per NIC", 0, 7),
      key("routing.ib_sm.adaptive", K::Bool, "false",
          "switch adaptive routing (needs nic.reorder: tolerant)"),
      key("routing.ib_sm.reroute_delay", K::Time, "10s", "from a topology change to the new tables", 0, kNone,
          "s"),
      key("nic", K::Map, "", "NIC transport"),
      choice("nic.reorder", {"strict", "tolerant"}, "strict on RoCEv2, tolerant on InfiniBand",
             "strict (a gap triggers one NACK and go-back-N) or tolerant (out-of-order packets are placed; "
             "losses are recovered by the timeout)"),
      key("nic.ack_every", K::Int, "1", "one ACK per N in-order packets (and at every message end)", 1, 1e6),
      key("nic.window", K::Bytes, "0",
          "max unacknowledged bytes per QP (0: none); packet backend only: the flow and hybrid backends "
          "refuse a window rather than ignore it",
          0, kNone, "bytes"),
      key("nic.failover", K::Bool, "false",
          "a connection whose NIC (or the peer's), or that NIC's host link, is down moves at its next "
          "retransmission timeout to another NIC of the same host that is up and reaches the peer; false: it "
          "retries until it fails (kind nic_down), as NCCL sees it"),
      above(key("nic.retransmit_timeout", K::Time, "1ms",
                "RoCEv2 only: initial (minimum) go-back-N timeout; progress (an ACK advancing the oldest "
                "unacknowledged PSN) restarts it",
                0, kNone, "s")),
      key("nic.rto_backoff", K::Double, "2", "RoCEv2: timeout multiplier per consecutive timeout", 1, 16),
      above(key("nic.max_rto", K::Time, "4.294967296s",
                "RoCEv2 only: largest timeout (NCCL's QP timeout, 4.096 us x 2^20)", 0, kNone, "s")),
      key("nic.retry_limit", K::Int, "7", "RoCEv2: retries without progress before the QP fails", 0, 255),
      key("nic.local_ack_timeout", K::Int, "20",
          "InfiniBand only: IBTA local ACK timeout exponent N, the timer is 4.096 us x 2^N every time (0: no "
          "timer)",
          0, 31),
      key("nic.retry_count", K::Int, "7", "InfiniBand: retries before the QP fails", 0, 7),
      key("congestion_control", K::Map, "", "end-to-end congestion control"),
      choice("congestion_control.algorithm", {"none", "dcqcn", "ibcc"}, "none",
             "DCQCN (RoCEv2) or IB CC (InfiniBand)"),
      choice("congestion_control.preset", {kDcqcnPresetNames.begin(), kDcqcnPresetNames.end()}, "dcqcn-paper",
             "DCQCN parameter preset"),
      key("congestion_control.dcqcn", K::Map, "",
          "DCQCN parameters over the preset (README, DCQCN parameters)"),
      key("congestion_control.ibcc", K::Map, "", "InfiniBand congestion control parameters"),
      key("failures", K::List, "none",
          "timed failures, relative to the start of the workloads, on every backend: each {at, action, and "
          "one of link, switch, nic, or host}. Overlapping failures hold a link down independently: it comes "
          "back when none holds it. With control_plane: static the tables never change beyond local "
          "failover"),
      required(key("failures[].at", K::Time, "", "when", 0, kNone, "s")),
      required(choice("failures[].action", {"down", "up", "flap", "pfc-storm", "pfc-storm-end"}, "",
                      "what happens")),
      key("failures[].link", K::List, "",
          "[a, b]: the link(s) between two nodes; [host-3, leaf-0] is every link of host-3 to leaf-0 (one "
          "per NIC)"),
      key("failures[].switch", K::String, "", "a switch by name"),
      key("failures[].nic", K::String, "",
          "host-<i>/<n>: NIC n of host i (0 to nics_per_host - 1); a NIC down is its host link down"),
      key("failures[].host", K::String, "",
          "pfc-storm: the host whose NICs send PAUSE without a break (as a NIC whose receive path hangs "
          "does)"),
      above(key("failures[].down_for", K::Time, "", "flap: down time per cycle", 0, kNone, "s")),
      above(key("failures[].up_for", K::Time, "down_for", "flap: up time per cycle", 0, kNone, "s")),
      key("failures[].count", K::Int, "1", "flap: cycles", 1, 1e6),
      key("watchdog", K::Map, "", "packet backend: stop a run that makes no progress"),
      above(key("watchdog.interval", K::Time, "1ms", "check period", 0, kNone, "s")),
      key("watchdog.no_progress", K::Time, "10ms",
          "stop the run when no data has reached a NIC this long with packets in the fabric, naming the "
          "stuck ports (0: off)",
          0, kNone, "s"),
      key("watchdog.pfc_deadlock", K::Bool, "true",
          "stop when PFC-paused switch ports form a cycle that lasts an interval, naming the cycle"),
      key("episodes", K::Map, "", "hybrid backend: packet-level congestion episodes"),
      key("episodes.seeds", K::Int, "8", "packet simulations of each distinct episode", 1, 256),
      key("episodes.replicas", K::Int, "3", "reruns of the flow level giving the confidence interval", 1, 64),
      open(key("episodes.tolerance", K::Double, "0.01",
               "fixed-point stop: capacity change per round, of nominal", 0, 1)),
      key("episodes.max_rounds", K::Int, "32", "rounds per recomputation at most", 1, 1000),
      key("workload", K::String, "none", "default workload file, relative to the topology file"),
  };
  for (auto& r : rest) k.push_back(std::move(r));
  const std::string dc = "congestion_control.dcqcn.", ib = "congestion_control.ibcc.";
  std::vector<KeySpec> cc{
      choice(dc + "variant", {"paper", "mlx"}, "the preset's",
             "DCQCN state machine: paper (SIGCOMM 2015: every CNP cuts at once) or mlx (ConnectX firmware, "
             "as HPCC's ns-3 models it: CNPs latched, cuts on a rate_reduce_interval grid, alpha on an "
             "alpha_timer grid)"),
      above(key(dc + "g", K::Double, "the preset's", "alpha gain (1/256 = 0.00390625)", 0, 1)),
      key(dc + "initial_alpha", K::Double, "the preset's", "alpha of a new flow", 0, 1),
      above(key(dc + "alpha_timer", K::Time, "the preset's", "alpha update period", 0, kNone, "s")),
      above(key(dc + "rate_increase_timer", K::Time, "the preset's", "rate increase period", 0, kNone, "s")),
      key(dc + "byte_counter", K::Bytes, "the preset's",
          "bytes per rate-increase step (0 or off: timer only)", 0, kNone, "bytes"),
      key(dc + "fast_recovery_stages", K::Int, "the preset's", "fast recovery steps before additive increase",
          0, 1000),
      above(key(dc + "additive_increase", K::Rate, "the preset's", "additive increase step", 0, kNone,
                "bit/s")),
      above(key(dc + "hyper_increase", K::Rate, "the preset's", "hyper increase step", 0, kNone, "bit/s")),
      above(key(dc + "min_rate", K::Rate, "the preset's", "lowest rate", 0, kNone, "bit/s")),
      key(dc + "rate_reduce_interval", K::Time, "the preset's", "mlx: cuts on this grid", 0, kNone, "s"),
      above(key(dc + "max_decrease_fraction", K::Double, "the preset's", "largest cut per CNP", 0, 1)),
      key(dc + "clamp_target_rate", K::Bool, "the preset's", "target rate clamped to the current on a cut"),
      key(dc + "clamp_target_rate_after_time_increase", K::Bool, "the preset's",
          "target clamped after a timer increase"),
      key(dc + "rate_on_first_cnp", K::Rate, "the preset's",
          "rate after the first CNP (0: off), <= host_speed", 0, kNone, "bit/s"),
      key(dc + "cnp_interval", K::Time, "the preset's", "at most one CNP per flow per interval", 0, kNone,
          "s"),
      key(ib + "ccti_increase", K::Int, "1", "CCT index step per BECN (IBTA A10)", 1, 16383),
      key(ib + "ccti_limit", K::Int, "127", "largest CCT index (a 14-bit index)", 1, 16383),
      above(key(ib + "ccti_timer", K::Time, "10us", "period of one CCT index decrease", 0, kNone, "s")),
      above(key(ib + "cct_scale", K::Double, "8", "CCT[i] = i / cct_scale packet times", 0, 1e9)),
      key(ib + "becn_interval", K::Time, "0us",
          "receiver: at most one BECN per QP per interval (0: every FECN)", 0, kNone, "s"),
  };
  for (auto& c : cc) k.push_back(std::move(c));
  return k;
}

}  // namespace

const Schema& topologySchema() {
  static const Schema s("topology", topologyKeys());
  return s;
}

}  // namespace fabricsim
