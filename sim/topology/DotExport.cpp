#include "sim/topology/DotExport.h"

#include <vector>

namespace fabricsim {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

void writeDot(const Topology& topo, const std::string& name, std::ostream& out) {
  out << "graph " << quoted(name) << " {\n";
  out << "  rankdir=BT;\n  node [fontsize=10];\n";
  const int tiers = topo.tiers();
  std::vector<std::vector<NodeId>> byTier(static_cast<size_t>(tiers) + 1);
  for (NodeId n = 0; n < topo.nodeCount(); ++n) byTier[topo.node(n).tier].push_back(n);
  for (size_t t = 0; t < byTier.size(); ++t) {
    if (byTier[t].empty()) continue;
    out << "  subgraph tier" << t << " {\n    rank=same;\n";
    for (NodeId n : byTier[t]) {
      const NodeInfo& info = topo.node(n);
      out << "    " << quoted(info.name) << " [shape=" << (info.kind == NodeKind::Host ? "box" : "ellipse");
      if (info.plane >= 0) out << ", tooltip=\"plane " << info.plane << "\"";
      out << "];\n";
    }
    out << "  }\n";
  }
  for (LinkId l = 0; l < topo.linkCount(); ++l) {
    const LinkInfo& li = topo.link(l);
    out << "  " << quoted(topo.node(li.a).name) << " -- " << quoted(topo.node(li.b).name) << " [tooltip=\""
        << formatRate(li.rate) << "\"];\n";
  }
  out << "}\n";
}

}  // namespace fabricsim
