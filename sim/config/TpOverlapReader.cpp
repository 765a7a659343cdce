#include "sim/config/TpOverlapReader.h"

namespace fabricsim {

void readTpOverlapConfig(YamlReader& r, const YAML::Node& parallelism, TpOverlapConfig& cfg) {
  if (!YamlReader::has(parallelism, "tp_comm_overlap_cfg")) return;
  const YAML::Node n = parallelism["tp_comm_overlap_cfg"];
  const std::string path = "parallelism.tp_comm_overlap_cfg";
  if (!r.expectMap(n, path)) return;
  r.checkKeys(n, path);
  for (const auto& [name, slot] : cfg.slots()) {
    if (!YamlReader::has(n, name)) continue;
    const YAML::Node s = n[name];
    const std::string p = YamlReader::join(path, name);
    if (!r.expectMap(s, p)) continue;
    r.checkKeys(s, p);
    r.read(s, p, "method", slot->method);
    // TE caps a communication kernel at 32 SMs (UB_MAX_SM); the GPU's count bounds it again
    // when the job is built.
    r.read(s, p, "num_sm", slot->numSm);
    r.read(s, p, "set_sm_margin", slot->smMargin);
    r.read(s, p, "num_splits", slot->numSplits);
  }
}

}  // namespace fabricsim
