// The sweep file's keys (DESIGN.md section 5; docs/sweep.md): what SweepLoader accepts. Paths are
// relative to the sweep file; `set` and `workload_set` take the keys of topology and workload files.
#include "sim/config/Schema.h"
#include "sim/config/SchemaKeys.h"
#include "sim/config/SweepSpec.h"

namespace fabricsim {
namespace {

using namespace schemakeys;

/// The keys a sweep's top level and each map value of an axis share: what one point runs.
std::vector<KeySpec> overrideKeys(const std::string& at, const std::string& whose) {
  using K = KeyType;
  const std::string p = at.empty() ? "" : at + ".";
  return {
      at.empty() ? required(key(p + "topology", K::String, "", whose + " topology file"))
                 : key(p + "topology", K::String, "the sweep's", whose + " topology file"),
      key(p + "workload", K::List, at.empty() ? "the topology's" : "the sweep's",
          whose + " workload file, or a list of them run at once (not with `workloads`)"),
      key(p + "workloads", K::List, "", "the same as `workload`"),
      key(p + "set", K::List, "none",
          whose + " `key.path=value` assignments to the topology (as `run --set`)"),
      key(p + "workload_set", K::List, "none",
          whose + " `key.path=value` assignments to the workload (as `run --workload-set`)"),
      key(p + "cc", K::String, "the topology's", whose + " congestion control (as `run --cc`)"),
      key(p + "congestion_control", K::String, "", "the same as `cc`"),
      key(p + "routing", K::String, "the topology's", whose + " routing algorithm (as `run --routing`)"),
      key(p + "backend", K::String, "packet", whose + " backend: packet, flow or hybrid"),
      key(p + "seed", K::Int, "1", whose + " seed", 0),
  };
}

std::vector<KeySpec> sweepKeys() {
  using K = KeyType;
  std::vector<KeySpec> k{key("name", K::String, "the file's stem", "sweep name")};
  for (auto& o : overrideKeys("", "every point's")) k.push_back(std::move(o));
  k.push_back(key("axes", K::List, "none: one point",
                  "the swept dimensions; the points are the product of their values (at most " +
                      std::to_string(SweepSpec::kMaxPoints) + ")"));
  k.push_back(
      required(key("axes[].name", K::String, "",
                   "what the axis varies: cc, routing, backend, seed, topology, workload, a topology key "
                   "(switch.buffer) or workload.<key>")));
  k.push_back(required(key("axes[].values", K::List, "",
                           "the axis' values: scalars, or maps {value: label, and what the point runs}")));
  k.push_back(
      required(key("axes[].values[].value", K::String, "", "the value's label in results and folder names")));
  for (auto& o : overrideKeys("axes[].values[]", "this value's")) k.push_back(std::move(o));
  return k;
}

}  // namespace

const Schema& sweepSchema() {
  static const Schema s("sweep", sweepKeys());
  return s;
}

}  // namespace fabricsim
