// SweepLoader: the sweep schema (docs/sweep.md), path resolution relative to the sweep file,
// and errors that name the sweep file, line, key path and what was expected.
#include "sim/config/SweepLoader.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sim/config/Schema.h"
#include "sim/core/Error.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

using testsupport::TempDir;

const std::string kSrc = FABRICSIM_SOURCE_DIR;
const std::string kTopo = kSrc + "/topologies/leafspine-16.yaml";
const std::string kWork = kSrc + "/workloads/nccl-allreduce.yaml";

/// Parses `text` as the file `dir`/sweep.yaml and returns every diagnostic, formatted, or "" if none.
std::string errorsOf(const TempDir& dir, const std::string& text) {
  try {
    parseSweepYaml(text, dir.file("sweep.yaml"));
  } catch (const InputError& e) {
    std::string out;
    for (const auto& d : e.diagnostics()) out += d.format() + "\n";
    return out;
  }
  return "";
}

TEST(SweepLoaderTest, ReadsBaseAxesAndMapValues) {
  TempDir dir;
  dir.write("t.yaml", "name: t\n");
  dir.write("w.yaml", "kind: collective\n");
  const std::string text =
      "name: demo\n"
      "topology: t.yaml\n"
      "workloads: [w.yaml]\n"
      "backend: packet\n"
      "seed: 7\n"
      "set: [switch.ecn.kmin=1KiB]\n"
      "workload_set: sizes.max=1MiB\n"
      "axes:\n"
      "  - name: cc\n"
      "    values: [none, dcqcn]\n"
      "  - name: links.technology\n"
      "    values: [roce]\n"
      "  - name: workload.iterations\n"
      "    values: [1, 2]\n"
      "  - name: gpus\n"
      "    values:\n"
      "      - {value: 16, topology: " +
      kTopo +
      ", workload_set: [hosts=16], routing: adaptive}\n"
      "      - {value: 8, set: [topology.leaves=2], seed: 3, workload: w.yaml}\n";
  const SweepSpec s = parseSweepYaml(text, dir.file("sweep.yaml"));
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(*s.base.topology, dir.file("t.yaml"));
  ASSERT_TRUE(s.base.workloads);
  EXPECT_EQ(s.base.workloads->at(0), dir.file("w.yaml"));
  EXPECT_EQ(*s.base.backend, "packet");
  EXPECT_EQ(*s.base.seed, 7u);
  EXPECT_EQ(s.base.sets, std::vector<std::string>{"switch.ecn.kmin=1KiB"});
  EXPECT_EQ(s.base.workloadSets, std::vector<std::string>{"sizes.max=1MiB"});
  ASSERT_EQ(s.axes.size(), 4u);
  EXPECT_EQ(s.pointCount(), 8u);
  EXPECT_EQ(s.axes[0].values[1].label, "dcqcn");
  EXPECT_EQ(*s.axes[0].values[1].overrides.cc, "dcqcn");
  EXPECT_EQ(s.axes[1].values[0].overrides.sets, std::vector<std::string>{"links.technology=roce"});
  EXPECT_EQ(s.axes[2].values[1].overrides.workloadSets, std::vector<std::string>{"iterations=2"});
  const auto& g = s.axes[3].values;
  EXPECT_EQ(g[0].label, "16");
  EXPECT_EQ(*g[0].overrides.topology, kTopo);
  EXPECT_EQ(*g[0].overrides.routing, "adaptive");
  EXPECT_EQ(g[0].overrides.workloadSets, std::vector<std::string>{"hosts=16"});
  EXPECT_TRUE(g[0].overrides.sets.empty()) << "a map value's label is not applied";
  EXPECT_EQ(*g[1].overrides.seed, 3u);
  EXPECT_EQ(g[1].overrides.workloads->at(0), dir.file("w.yaml"));
  EXPECT_EQ(g[1].line, 18);
}

TEST(SweepLoaderTest, MissingTopologyAndEmptyValuesNameTheLine) {
  TempDir dir;
  const std::string e = errorsOf(dir, "axes:\n  - name: routing\n    values: []\n  - name: cc\n");
  EXPECT_NE(e.find("sweep.yaml:1:1: 'topology': missing required key 'topology'"), std::string::npos) << e;
  EXPECT_NE(e.find("sweep.yaml:3:13: 'axes[0].values': expected at least one value, found an empty list"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("sweep.yaml:4:5: 'axes[1].values': missing"), std::string::npos) << e;
}

// Issue 21: 64 axes of two values wrapped the point count to 0 ("0 points", exit 0), 26 axes
// (67M points) grew until memory ran out. More than 100,000 points is an error at `axes`; 16
// axes of two values (65,536 points) pass.
TEST(SweepLoaderTest, GridsOfMoreThan100000PointsAreErrors) {
  TempDir dir;
  auto sweep = [&](int axes) {
    std::string t = "topology: " + kTopo + "\naxes:\n";
    for (int i = 0; i < axes; ++i) t += "  - name: workload.x" + std::to_string(i) + "\n    values: [1, 2]\n";
    return t;
  };
  for (int axes : {17, 26, 64}) {
    const std::string e = errorsOf(dir, sweep(axes));
    EXPECT_NE(e.find("sweep.yaml:3:3: 'axes': the axes give more than 100000 points"), std::string::npos)
        << axes << " axes: " << e;
  }
  EXPECT_EQ(errorsOf(dir, sweep(16)), "");
  EXPECT_EQ(parseSweepYaml(sweep(16), dir.file("sweep.yaml")).pointCount(), 65536u);
}

TEST(SweepLoaderTest, UnknownKeysAreErrors) {
  TempDir dir;
  const std::string e = errorsOf(dir, "topology: " + kTopo +
                                          "\nworkers: 3\naxes:\n  - name: routing\n    value: [ecmp]\n"
                                          "    values: [{value: a, routng: ecmp}]\n");
  // A key within one edit per three letters of an allowed one is named as the likely intent;
  // 'workers' is four edits from 'workload', too far to guess.
  EXPECT_NE(e.find("sweep.yaml:2:1: 'workers': unknown key 'workers'; expected one of: name"),
            std::string::npos)
      << e;
  EXPECT_NE(
      e.find("sweep.yaml:5:5: 'axes[0].value': unknown key 'value' in 'axes[0]' (did you mean 'values'?); "
             "expected one of: name | values"),
      std::string::npos)
      << e;
  EXPECT_NE(e.find("sweep.yaml:6:25: 'axes[0].values[0].routng': unknown key 'routng' in 'axes[0].values[0]' "
                   "(did you mean 'routing'?)"),
            std::string::npos)
      << e;
}

TEST(SweepLoaderTest, DuplicateAxesAreErrors) {
  TempDir dir;
  const std::string e = errorsOf(dir, "topology: " + kTopo +
                                          "\naxes:\n  - {name: cc, values: [none]}\n"
                                          "  - {name: congestion_control, values: [dcqcn]}\n"
                                          "  - {name: routing, values: [ecmp, ecmp]}\n");
  EXPECT_NE(e.find("sweep.yaml:4:12: 'axes[1].name': expected each axis once, found a second axis "
                   "'congestion_control' (cc and congestion_control are the same axis)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("'axes[2].values[1]': expected distinct values on axis 'routing', found 'ecmp' twice"),
            std::string::npos)
      << e;
}

TEST(SweepLoaderTest, BadMapValuesAreErrors) {
  TempDir dir;
  const std::string e = errorsOf(dir, "topology: " + kTopo +
                                          "\naxes:\n  - name: gpus\n    values:\n"
                                          "      - {topology: " +
                                          kTopo +
                                          "}\n"
                                          "      - {value: 2, seed: -1, set: [nokey]}\n"
                                          "      - [a, b]\n");
  EXPECT_NE(e.find("sweep.yaml:5:9: 'axes[0].values[0].value': missing"), std::string::npos) << e;
  EXPECT_NE(e.find("sweep.yaml:6:26: 'axes[0].values[1].seed':"), std::string::npos) << e;
  EXPECT_NE(e.find("'axes[0].values[1].set[0]': expected an assignment key.path=value, found 'nokey'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("sweep.yaml:7:9: 'axes[0].values[2]': expected a scalar value or a map {value"),
            std::string::npos)
      << e;
}

TEST(SweepLoaderTest, MissingFilesNameTheSweepFileLine) {
  TempDir dir;
  const std::string e = errorsOf(dir,
                                 "topology: ../no-such-topology.yaml\n"
                                 "workloads: [" +
                                     kWork +
                                     ", nope.yaml]\n"
                                     "axes:\n"
                                     "  - name: topology\n"
                                     "    values: [" +
                                     kTopo +
                                     ", missing.yaml]\n"
                                     "  - name: x\n"
                                     "    values: [{value: a, workload: gone.yaml}]\n");
  EXPECT_NE(
      e.find("sweep.yaml:1:11: 'topology': expected an existing topology file (relative to the sweep file), "
             "found '../no-such-topology.yaml'"),
      std::string::npos)
      << e;
  EXPECT_NE(e.find("sweep.yaml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("'workloads[1]': expected an existing workload file"), std::string::npos) << e;
  EXPECT_NE(e.find("sweep.yaml:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("'axes[0].values[1]': expected an existing topology file"), std::string::npos) << e;
  EXPECT_NE(e.find("sweep.yaml:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("'axes[1].values[0].workload': expected an existing workload file"), std::string::npos)
      << e;
}

TEST(SweepLoaderTest, InvalidYamlAndMissingFile) {
  TempDir dir;
  EXPECT_NE(errorsOf(dir, "topology: [a\n").find("invalid YAML"), std::string::npos);
  try {
    loadSweepFile(dir.file("absent.yaml"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabricsim

namespace fabricsim {
namespace {

// Every key the sweep schema lists (sim/config/SweepSchema.cpp, printed by `fabricsim schema
// --file sweep`) is accepted where it lists it: a file using each one at the top level (but
// `workloads`, the other spelling of `workload`) and in an axis value parses without error.
TEST(SweepLoaderTest, EveryKeyOfTheSweepSchemaIsAccepted) {
  TempDir dir;
  dir.write("t.yaml", "name: t\n");
  dir.write("w.yaml", "kind: collective\n");
  const std::map<std::string, std::string> value{
      {"name", "s"},       {"topology", "t.yaml"},    {"workload", "w.yaml"}, {"workloads", "[w.yaml]"},
      {"set", "[a.b=1]"},  {"workload_set", "[c=2]"}, {"cc", "none"},         {"congestion_control", "none"},
      {"routing", "ecmp"}, {"backend", "flow"},       {"seed", "4"}};
  const Schema& s = sweepSchema();
  std::string top, inValue;
  for (const auto& k : s.children("")) {
    if (k == "axes" || k == "workloads" || k == "congestion_control") continue;  // one spelling each
    ASSERT_TRUE(value.count(k)) << "no example value for the sweep key " << k;
    top += k + ": " + value.at(k) + "\n";
  }
  for (const auto& k : s.children("axes[].values[]")) {
    if (k == "value" || k == "workloads" || k == "congestion_control") continue;
    ASSERT_TRUE(value.count(k)) << "no example value for the axis-value key " << k;
    inValue += ", " + k + ": " + value.at(k);
  }
  EXPECT_EQ(errorsOf(dir, top + "axes:\n  - name: x\n    values:\n      - {value: a" + inValue + "}\n"), "");
  EXPECT_EQ(s.children("axes[]"), (std::vector<std::string>{"name", "values"}));
}

}  // namespace
}  // namespace fabricsim
