#include "sim/config/TpOverlapReader.h"

namespace fabricsim {

void readTpOverlapConfig(YamlReader& r, const YAML::Node& parallelism, TpOverlapConfig& cfg) {
  if (!YamlReader::has(parallelism, "tp_comm_overlap_cfg")) return;
  const YAML::Node n = parallelism["tp_comm_overlap_cfg"];
  const std::string path = "parallelism.tp_comm_overlap_cfg";
  if (!r.expectMap(n, path)) return;
  r.checkKeys(n, path,
              {"qkv_fprop", "proj_fprop", "fc1_fprop", "fc2_fprop", "qkv_dgrad", "qkv_wgrad", "proj_dgrad",
               "fc1_dgrad", "fc1_wgrad", "fc2_dgrad"});
  for (const auto& [name, slot] : cfg.slots()) {
    if (!YamlReader::has(n, name)) continue;
    const YAML::Node s = n[name];
    const std::string p = YamlReader::join(path, name);
    if (!r.expectMap(s, p)) continue;
    r.checkKeys(s, p, {"method", "num_sm", "set_sm_margin", "num_splits"});
    r.getChoice(s, p, "method", slot->method, {"ring_exchange", "pipeline", "bulk"});
    // TE caps a communication kernel at 32 SMs (UB_MAX_SM); the GPU's count bounds it again
    // when the job is built.
    r.getInt(s, p, "num_sm", slot->numSm, 1, 32);
    r.getBool(s, p, "set_sm_margin", slot->smMargin);
    r.getInt(s, p, "num_splits", slot->numSplits, 1, 64);
  }
}

}  // namespace fabricsim
