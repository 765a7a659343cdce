#include "sim/config/SwitchSectionReader.h"

#include <string>

namespace fabricsim {
namespace {

using YAML::Node;

/// `classes: [0, 3]` -> bits 0 and 3. Traffic classes 0-6 carry data (7 is control).
void readClasses(YamlReader& r, const Node& m, const std::string& p, uint8_t& mask) {
  if (!YamlReader::has(m, "classes")) return;
  const Node list = m["classes"];
  const std::string cp = YamlReader::join(p, "classes");
  if (!r.expectSequence(list, cp)) return;
  if (list.size() == 0) {
    r.error(list, cp, "expected at least one traffic class (0-6), found an empty list");
    return;
  }
  uint8_t bits = 0;
  bool ok = true;
  for (size_t i = 0; i < list.size(); ++i) {
    int64_t c = 0;
    if (r.asInt(list[i], YamlReader::index(cp, i), c, 0, 6))
      bits = static_cast<uint8_t>(bits | (1u << c));
    else
      ok = false;
  }
  if (ok) mask = bits;
}

}  // namespace

void readSwitch(YamlReader& r, const Node& root, TopologySpec& spec) {
  if (!YamlReader::has(root, "switch")) return;
  const Node s = root["switch"];
  const std::string p = "switch";
  if (!r.expectMap(s, p)) return;
  r.checkKeys(s, p);
  r.read(s, p, "buffer", spec.sw.buffer);
  Bytes reserve = 0;
  if (r.read(s, p, "reserve", reserve)) {
    if (reserve > spec.sw.buffer)
      r.error(s["reserve"], "switch.reserve",
              "expected a reserve per ingress port within the switch buffer (" + formatBytes(spec.sw.buffer) +
                  "), found " + formatBytes(reserve));
    else
      spec.sw.reserve = reserve;
  }
  r.read(s, p, "latency", spec.sw.latency);
  r.read(s, p, "dt_alpha", spec.sw.dtAlpha);
  const Bytes buffer = spec.sw.buffer;
  if (YamlReader::has(s, "ecn")) {
    const Node e = s["ecn"];
    const std::string ep = "switch.ecn";
    if (r.expectMap(e, ep)) {
      r.checkKeys(e, ep);
      bool enabled = true;
      r.read(e, ep, "enabled", enabled);
      spec.sw.ecn.enabled = enabled;
      const auto need = enabled ? YamlReader::Need::Required : YamlReader::Need::Optional;
      const bool kmin = r.read(e, ep, "kmin", spec.sw.ecn.kmin, need);
      const bool kmax = r.read(e, ep, "kmax", spec.sw.ecn.kmax, need);
      r.read(e, ep, "pmax", spec.sw.ecn.pmax, need);
      if (kmin && kmax && spec.sw.ecn.kmin > spec.sw.ecn.kmax)
        r.error(e["kmin"], "switch.ecn.kmin",
                "expected kmin <= kmax (" + formatBytes(spec.sw.ecn.kmax) + "), found " +
                    formatBytes(spec.sw.ecn.kmin));
      if (kmax && spec.sw.ecn.kmax > buffer)
        r.error(e["kmax"], "switch.ecn.kmax",
                "expected kmax within the switch buffer (" + formatBytes(buffer) + "), found " +
                    formatBytes(spec.sw.ecn.kmax));
      std::string markOn;
      if (r.read(e, ep, "mark_on", markOn)) spec.sw.ecn.markOnDequeue = markOn == "dequeue";
      readClasses(r, e, ep, spec.sw.ecn.classMask);
    }
  }
  if (YamlReader::has(s, "pfc")) {
    const Node f = s["pfc"];
    const std::string fp = "switch.pfc";
    if (r.expectMap(f, fp)) {
      r.checkKeys(f, fp);
      bool enabled = true;
      r.read(f, fp, "enabled", enabled);
      spec.sw.pfc.enabled = enabled;
      // Dynamic thresholds (dynamic_alpha) replace xoff/xon, which are then optional; when they
      // are given as well (e.g. a --set switching a static file to dynamic) they are checked but unused.
      r.read(f, fp, "dynamic_alpha", spec.sw.pfc.dynamicAlpha);
      const bool needStatic = enabled && !YamlReader::has(f, "dynamic_alpha");
      const auto need = needStatic ? YamlReader::Need::Required : YamlReader::Need::Optional;
      const bool xoff = r.read(f, fp, "xoff", spec.sw.pfc.xoff, need);
      const bool xon = r.read(f, fp, "xon", spec.sw.pfc.xon, need);
      if (xoff && needStatic && spec.sw.pfc.xoff == 0)
        r.error(f["xoff"], "switch.pfc.xoff",
                "expected a positive static XOFF threshold (or dynamic_alpha for dynamic ones), found 0");
      if (xoff && xon && spec.sw.pfc.xon > spec.sw.pfc.xoff)
        r.error(f["xon"], "switch.pfc.xon",
                "expected xon <= xoff (" + formatBytes(spec.sw.pfc.xoff) + "), found " +
                    formatBytes(spec.sw.pfc.xon));
      if (xoff && spec.sw.pfc.xoff > buffer)
        r.error(f["xoff"], "switch.pfc.xoff",
                "expected xoff within the switch buffer (" + formatBytes(buffer) + "), found " +
                    formatBytes(spec.sw.pfc.xoff));
      if (r.read(f, fp, "xon_delta", spec.sw.pfc.xonDelta) && spec.sw.pfc.xonDelta > buffer)
        r.error(f["xon_delta"], "switch.pfc.xon_delta",
                "expected xon_delta within the switch buffer (" + formatBytes(buffer) + "), found " +
                    formatBytes(spec.sw.pfc.xonDelta));
      if (r.read(f, fp, "headroom", spec.sw.pfc.headroom) && spec.sw.pfc.headroom > buffer)
        r.error(f["headroom"], "switch.pfc.headroom",
                "expected headroom within the switch buffer (" + formatBytes(buffer) + "), found " +
                    formatBytes(spec.sw.pfc.headroom));
      r.read(f, fp, "quanta", spec.sw.pfc.quanta);
      r.read(f, fp, "response_time", spec.sw.pfc.responseTime);
      if (YamlReader::has(f, "storm_watchdog")) {
        const Node w = f["storm_watchdog"];
        const std::string wp = fp + ".storm_watchdog";
        if (r.expectMap(w, wp)) {
          r.checkKeys(w, wp);
          r.read(w, wp, "detection", spec.sw.pfc.stormDetection);
          r.read(w, wp, "restoration", spec.sw.pfc.stormRestoration);
        }
      }
      readClasses(r, f, fp, spec.sw.pfc.classMask);
    }
  }
  Bytes credit = 0;
  if (r.read(s, p, "credit_buffer", credit)) {
    if (credit != 0 && (credit < spec.links.mtu || credit > buffer))
      r.error(s["credit_buffer"], "switch.credit_buffer",
              "expected 0 (auto: the buffer split among the ports) or a size between one MTU (" +
                  std::to_string(spec.links.mtu) + " B) and the switch buffer (" + formatBytes(buffer) +
                  "), found " + formatBytes(credit));
    else
      spec.sw.creditBuffer = credit;
  }
}

}  // namespace fabricsim
