#include "sim/config/SpecError.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>

#include "sim/config/SetOverride.h"
#include "sim/config/TopologyLoader.h"
#include "sim/config/YamlReader.h"

namespace fabricsim {

InputError specError(const TopologySpec& spec, const std::string& keyPath, const std::string& message) {
  YamlReader r(spec.file);
  for (const auto& a : spec.setOverrides) r.addOverride(parseSetAssignment(a).keyPath, a);
  YAML::Node at;
  std::error_code ec;
  if (!spec.file.empty() && std::filesystem::is_regular_file(spec.file, ec)) {
    try {
      YAML::Node root = YAML::Load(readInputFile(spec.file));
      for (const auto& a : spec.setOverrides) applySetOverride(root, a);
      // Walk "a.b.c" down the maps, keeping the deepest node that exists.
      // yaml-cpp's Node::operator= writes through to the node it refers to: walk with reset().
      YAML::Node node;
      node.reset(root);
      at.reset(root);
      std::stringstream path(keyPath);
      std::string part;
      while (std::getline(path, part, '.')) {
        if (!node.IsMap()) break;
        const YAML::Node& parent = node;
        const YAML::Node child = parent[part];
        if (!child.IsDefined()) break;
        node.reset(child);
        at.reset(child);
      }
    } catch (const std::exception&) {
      at = YAML::Node();  // the file was readable when loaded; if not now, report without a line
    }
  }
  r.error(at, keyPath, message);
  return InputError(r.diagnostics());
}

}  // namespace fabricsim
