#include "gpu/common/TransformerShape.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace fabricsim::gpu {
namespace {

TransformerShape shape(const char* name, int hidden, int ffn, int heads, int kvHeads, int seq, bool gated) {
  TransformerShape s;
  s.name = name;
  s.hidden = hidden;
  s.ffnHidden = ffn;
  s.heads = heads;
  s.kvHeads = kvHeads;
  s.seqLen = seq;
  s.gatedMlp = gated;
  return s;
}

const std::vector<TransformerShape>& presets() {
  static const std::vector<TransformerShape> all = {
      shape("gpt3-175b", 12288, 49152, 96, 96, 2048, false),
      shape("llama3-70b", 8192, 28672, 64, 8, 8192, true),
      shape("llama3-405b", 16384, 53248, 128, 8, 8192, true),
  };
  return all;
}

void positive(int v, const char* what) {
  if (v <= 0) throw std::invalid_argument(std::string(what) + " must be a positive integer");
}

}  // namespace

void TransformerShape::finalize() {
  positive(hidden, "hidden");
  positive(heads, "heads");
  positive(seqLen, "seq_len");
  positive(microBatch, "micro_batch");
  positive(tp, "tp");
  if (ffnHidden == 0) ffnHidden = 4 * hidden;
  if (kvHeads == 0) kvHeads = heads;
  positive(ffnHidden, "ffn_hidden");
  positive(kvHeads, "kv_heads");
  if (hidden % heads != 0) throw std::invalid_argument("hidden must be divisible by heads");
  if (heads % kvHeads != 0) throw std::invalid_argument("heads must be divisible by kv_heads");
  if (heads % tp != 0) throw std::invalid_argument("heads must be divisible by tp");
  if (ffnHidden % tp != 0) throw std::invalid_argument("ffn_hidden must be divisible by tp");
  if (kvHeads % tp != 0 && tp % kvHeads != 0)
    throw std::invalid_argument("kv_heads and tp must divide one another");
}

std::optional<TransformerShape> TransformerShape::preset(const std::string& name) {
  for (const auto& s : presets())
    if (s.name == name) return s;
  return std::nullopt;
}

std::vector<std::string> TransformerShape::presetNames() {
  std::vector<std::string> out;
  for (const auto& s : presets()) out.push_back(s.name);
  return out;
}

TransformerShape TransformerShape::fromWorkloadFile(const std::filesystem::path& path) {
  const std::string file = path.string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(file + ": " + e.what());
  }
  auto fail = [&](const std::string& what) { throw std::invalid_argument(file + ": " + what); };
  if (!root.IsMap()) fail("expected a workload map");
  if (root["kind"] && root["kind"].as<std::string>("") != "training")
    fail("expected kind: training, found kind: " + root["kind"].as<std::string>(""));
  const YAML::Node model = root["model"];
  if (!model) fail("missing key 'model'");
  TransformerShape s;
  try {
    if (model.IsScalar()) {
      auto p = preset(model.as<std::string>());
      if (!p) fail("model: unknown preset '" + model.as<std::string>() + "'");
      s = *p;
    } else if (model.IsMap()) {
      if (model["preset"]) {
        auto p = preset(model["preset"].as<std::string>());
        if (!p) fail("model.preset: unknown preset '" + model["preset"].as<std::string>() + "'");
        s = *p;
      } else {
        s.name = path.stem().string();
      }
      if (model["hidden"]) s.hidden = model["hidden"].as<int>();
      if (model["ffn_hidden"]) s.ffnHidden = model["ffn_hidden"].as<int>();
      if (model["heads"]) s.heads = model["heads"].as<int>();
      if (model["kv_heads"]) s.kvHeads = model["kv_heads"].as<int>();
      if (model["seq_len"]) s.seqLen = model["seq_len"].as<int>();
      if (model["gated_mlp"]) s.gatedMlp = model["gated_mlp"].as<bool>();
    } else {
      fail("model: expected a preset name or a map");
    }
    if (const YAML::Node par = root["parallelism"]) {
      if (par["tp"]) s.tp = par["tp"].as<int>();
      if (par["micro_batch"]) s.microBatch = par["micro_batch"].as<int>();
    }
  } catch (const YAML::Exception& e) {
    fail(e.what());
  }
  try {
    s.finalize();
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  return s;
}

}  // namespace fabricsim::gpu
