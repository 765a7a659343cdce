// `fabricsim explain`: where a job's step time goes. Runs the workload as `fabricsim run` does,
// then once more per communicator (tp, pp, dp; a Chakra trace's process groups) with that
// communicator's calls and messages taking no time, and splits each iteration into compute (the
// busiest rank's kernels), pipeline bubble and idle (the compute-only run's time beyond that),
// and exposed communication (the full run's beyond the compute-only run's), the latter by group:
// what making the group's communication free saves (its marginal cost). Groups that overlap one
// another make the marginal costs add up to more or less than the whole; the difference is
// printed as such. Exit status as `fabricsim run`: 0, 2 bad input, 3 a run failed.
#include <boost/program_options.hpp>
#include <cstdio>

#include "sim/app/CommandLine.h"
#include "sim/app/Commands.h"
#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"
#include "sim/runtime/Experiment.h"

namespace po = boost::program_options;

namespace fabricsim {

namespace {

/// The job's JCT (s) in a run's results; NaN when it did not finish.
double jctOf(const nlohmann::json& results, size_t job) {
  const auto& j = results["jobs"][job]["jct_s"];
  return j.is_number() ? j.get<double>() : std::nan("");
}

}  // namespace

int explainCommand(const std::vector<std::string>& args) {
  RunOptions opt;
  opt.backend = "flow";
  std::string out;
  po::options_description desc(
      "usage: fabricsim explain TOPOLOGY.yaml --workload W.yaml [options]\n\n"
      "Breaks each training, trace or Chakra job's iteration into compute, pipeline bubble and idle,\n"
      "and exposed communication by group (tp, pp, dp, a trace's process groups): each group's\n"
      "share is what the iteration saves when that group's communication takes no time, measured\n"
      "by running the workload again once per group.");
  desc.add_options()("help,h", "show this help")(
      "workload,w", po::value<std::vector<std::string>>(&opt.workloadPaths)->composing(),
      "workload YAML file (repeatable; default: the topology's `workload:`)")(
      "backend", po::value<std::string>(&opt.backend)->default_value("flow"), "packet | flow | hybrid")(
      "set", po::value<std::vector<std::string>>(&opt.sets)->composing(),
      "override a topology key (repeatable)")(
      "workload-set", po::value<std::vector<std::string>>(&opt.workloadSets)->composing(),
      "override a key of every workload file (repeatable)")(
      "seed", po::value<uint64_t>(&opt.seed)->default_value(1), "random seed")(
      "timeline", po::value<std::string>(&opt.timelinePath),
      "write the full run's Chrome/Perfetto timeline here")("out,o", po::value<std::string>(&out),
                                                            "write the breakdown as JSON here");
  po::variables_map vm;
  if (const int status = parseCommandLine(args, desc, opt.topologyPath, "explain", vm); status >= 0)
    return status;
  if (opt.topologyPath.empty()) {
    std::fprintf(stderr, "error: fabricsim explain: missing TOPOLOGY.yaml\n");
    return 2;
  }
  ResultsFile::checkOutputPath(out, "--out");
  ResultsFile::checkOutputPath(opt.timelinePath, "--timeline");
  opt.progress = false;
  Experiment full(opt);
  full.run();
  if (full.failed()) {
    std::fprintf(stderr, "error: fabricsim explain: the run failed (%s)\n",
                 full.failures().front().message.c_str());
    return kRunFailedStatus;
  }
  full.writeTimeline();
  const nlohmann::json results = full.results();
  nlohmann::json doc;
  doc["backend"] = opt.backend;
  doc["jobs"] = nlohmann::json::array();
  bool any = false;
  for (size_t i = 0; i < full.jobs().size(); ++i) {
    const Experiment::Job& job = full.jobs()[i];
    if (!job.executor || !job.trace) continue;
    any = true;
    const auto& rj = results["jobs"][i];
    const int iterations = std::max(1, job.trace->iterations);
    const double jct = jctOf(results, i);
    const double compute = rj["compute_s"].get<double>();  // the busiest rank's, all iterations
    const double computeOnly = job.computeOnly.seconds();
    const double exposed = std::max(0.0, jct - computeOnly);
    nlohmann::json groups = nlohmann::json::object();
    double attributed = 0;
    // Communicators some op calls or messages on (a run with an unused one free changes nothing).
    std::vector<bool> used(job.trace->communicators.size(), false);
    for (const Program& prog : job.trace->programs)
      for (const TraceOp& op : prog.ops)
        if (op.type != OpType::Compute) used[op.comm] = true;
    for (size_t ci = 0; ci < job.trace->communicators.size(); ++ci) {
      const Communicator& c = job.trace->communicators[ci];
      if (!used[ci] || groups.contains(c.name)) continue;
      RunOptions o = opt;
      o.freeCommunicators = {c.name};
      o.timelinePath.clear();
      Experiment whatIf(o);
      whatIf.run();
      if (whatIf.failed()) {
        std::fprintf(stderr, "error: fabricsim explain: the run with %s free failed\n", c.name.c_str());
        return kRunFailedStatus;
      }
      const double saved = jct - jctOf(whatIf.results(), i);
      groups[c.name] = saved / iterations;
      attributed += saved;
    }
    nlohmann::json j;
    j["name"] = job.spec->name;
    j["iterations"] = iterations;
    j["per_iteration_s"] = {{"iteration", jct / iterations},
                            {"compute", compute / iterations},
                            {"bubble_and_idle", std::max(0.0, computeOnly - compute) / iterations},
                            {"exposed_communication", exposed / iterations},
                            {"exposed_by_group", groups},
                            {"between_groups", (exposed - attributed) / iterations}};
    doc["jobs"].push_back(j);
    const auto& p = j["per_iteration_s"];
    const double it = p["iteration"].get<double>();
    auto line = [&](const char* what, double s, const char* note) {
      std::printf("  %-34s %11.3f ms %6.1f%%  %s\n", what, s * 1e3, it > 0 ? 100 * s / it : 0.0, note);
    };
    std::printf("%s (%s backend, %d iteration%s), per iteration:\n", job.spec->name.c_str(),
                opt.backend.c_str(), iterations, iterations == 1 ? "" : "s");
    line("iteration", it, "");
    line("compute", p["compute"].get<double>(), "the busiest rank's kernels");
    line("pipeline bubble and idle", p["bubble_and_idle"].get<double>(), "compute-only run beyond compute");
    line("exposed communication", p["exposed_communication"].get<double>(),
         "full run beyond compute-only run");
    for (const auto& [name, v] : groups.items()) {
      const std::string label = "  " + name;
      line(label.c_str(), v.get<double>(), "saved when its communication is free");
    }
    line("  between groups", p["between_groups"].get<double>(),
         "exposed less the groups' sum (groups hiding one another)");
  }
  if (!any) {
    std::fprintf(stderr, "error: fabricsim explain: no training, trace or chakra job among the workloads\n");
    return 2;
  }
  if (!out.empty()) ResultsFile::writeJson(out, doc);
  return 0;
}

}  // namespace fabricsim
