#include "sim/config/RunSectionsReader.h"

namespace fabricsim {

using YAML::Node;

void readFailures(YamlReader& r, const Node& root, TopologySpec& spec) {
  if (!YamlReader::has(root, "failures")) return;
  const Node list = root["failures"];
  const std::string p = "failures";
  if (list.IsNull()) return;
  if (!r.expectSequence(list, p)) return;
  for (size_t i = 0; i < list.size(); ++i) {
    const Node f = list[i];
    const std::string fp = YamlReader::index(p, i);
    if (!r.expectMap(f, fp)) continue;
    r.checkKeys(f, fp);
    FailureSpec fs;
    fs.line = YamlReader::lineOf(f);
    bool ok = r.read(f, fp, "at", fs.at);
    if (!r.read(f, fp, "action", fs.action)) continue;
    const bool flap = fs.action == "flap";
    for (const char* k : {"down_for", "up_for", "count"})
      if (!flap && YamlReader::has(f, k)) {
        r.error(f[k], YamlReader::join(fp, k), "only 'action: flap' takes down_for, up_for and count");
        ok = false;
      }
    if (flap) {
      ok = r.read(f, fp, "down_for", fs.downFor, YamlReader::Need::Required) && ok;
      fs.upFor = fs.downFor;
      ok = r.read(f, fp, "up_for", fs.upFor) && ok;
      ok = r.read(f, fp, "count", fs.count) && ok;
    }
    const bool storm = fs.action == "pfc-storm" || fs.action == "pfc-storm-end";
    const bool hasLink = YamlReader::has(f, "link");
    const bool hasSwitch = YamlReader::has(f, "switch");
    const bool hasHost = YamlReader::has(f, "host");
    if (storm) {
      if (!hasHost || hasLink || hasSwitch) {
        r.error(f, fp,
                "expected 'host: name' (the host whose NICs send the PAUSE storm) and no link or switch");
        continue;
      }
      ok = r.read(f, fp, "host", fs.host) && ok;
      if (ok) spec.failures.push_back(std::move(fs));
      continue;
    }
    if (hasHost) {
      r.error(f["host"], YamlReader::join(fp, "host"),
              "a host is the target of 'action: pfc-storm | pfc-storm-end' only; links and switches go down "
              "or up");
      continue;
    }
    const bool hasNic = YamlReader::has(f, "nic");
    if (int(hasLink) + int(hasSwitch) + int(hasNic) != 1) {
      r.error(f, fp,
              hasLink || hasSwitch || hasNic
                  ? "expected exactly one of 'link', 'switch' and 'nic', found several"
                  : "expected 'link: [a, b]' (two node names), 'switch: name' or 'nic: host-<i>/<n>'");
      continue;
    }
    if (hasNic) {
      // host-3/1: NIC 1 of host-3. The host's existence and the NIC's range are checked against the
      // topology when the run is built (FailureInjector).
      std::string v;
      const std::string np = YamlReader::join(fp, "nic");
      if (!r.read(f, fp, "nic", v)) continue;
      const size_t slash = v.rfind('/');
      const std::string index = slash == std::string::npos ? "" : v.substr(slash + 1);
      const bool digits =
          !index.empty() && index.size() <= 6 && index.find_first_not_of("0123456789") == std::string::npos;
      if (slash == 0 || !digits) {
        r.error(f["nic"], np,
                "expected a NIC as 'host-<i>/<n>' (NIC n of host i, e.g. host-3/1), found '" + v + "'");
        continue;
      }
      fs.nicHost = v.substr(0, slash);
      fs.nicIndex = std::stoi(index);
    } else if (hasSwitch) {
      ok = r.read(f, fp, "switch", fs.node) && ok;
    } else {
      const Node l = f["link"];
      const std::string lp = YamlReader::join(fp, "link");
      if (!l.IsSequence() || l.size() != 2) {
        r.error(
            l, lp,
            "expected a list of two node names, e.g. [agg-0-0, core-0], found " + YamlReader::describe(l));
        continue;
      }
      std::string a, b;
      ok = r.asString(l[0], YamlReader::index(lp, 0), a) && ok;
      ok = r.asString(l[1], YamlReader::index(lp, 1), b) && ok;
      if (!a.empty() && a == b) {
        r.error(l, lp, "expected two different node names, found '" + a + "' twice");
        ok = false;
      }
      fs.link = {a, b};
    }
    if (ok) spec.failures.push_back(std::move(fs));
  }
}

void readWatchdog(YamlReader& r, const Node& root, TopologySpec& spec) {
  if (!YamlReader::has(root, "watchdog")) return;
  const Node w = root["watchdog"];
  const std::string p = "watchdog";
  if (!r.expectMap(w, p)) return;
  r.checkKeys(w, p);
  r.read(w, p, "interval", spec.watchdog.interval);
  r.read(w, p, "no_progress", spec.watchdog.noProgress);
  r.read(w, p, "pfc_deadlock", spec.watchdog.pfcDeadlock);
  if (spec.watchdog.noProgress > Time::zero() && spec.watchdog.noProgress < spec.watchdog.interval)
    r.error(YamlReader::has(w, "no_progress") ? w["no_progress"] : w, "watchdog.no_progress",
            "expected 0 (off) or at least one watchdog interval (" + formatTime(spec.watchdog.interval) +
                "), found " + formatTime(spec.watchdog.noProgress));
}

void readEpisodes(YamlReader& r, const Node& root, TopologySpec& spec) {
  if (!YamlReader::has(root, "episodes")) return;
  const Node e = root["episodes"];
  const std::string p = "episodes";
  if (!r.expectMap(e, p)) return;
  spec.episodes.given = true;
  r.checkKeys(e, p);
  r.read(e, p, "seeds", spec.episodes.seeds);
  r.read(e, p, "replicas", spec.episodes.replicas);
  if (spec.episodes.replicas > spec.episodes.seeds)
    r.error(YamlReader::has(e, "replicas") ? e["replicas"] : e["seeds"], "episodes.replicas",
            "expected at most episodes.seeds (" + std::to_string(spec.episodes.seeds) +
                ") replicas: each replica is a group of the seeds, found " +
                std::to_string(spec.episodes.replicas));
  r.read(e, p, "max_rounds", spec.episodes.maxRounds);
  r.read(e, p, "tolerance", spec.episodes.tolerance);
}

}  // namespace fabricsim
