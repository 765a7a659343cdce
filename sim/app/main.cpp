// fabricsim: command-line entry point. Dispatches to one subcommand per file.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "sim/app/Commands.h"
#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"

namespace {

void usage(FILE* out) {
  std::fprintf(
      out,
      "fabricsim: discrete-event simulator of AI-cluster network fabrics\n\n"
      "usage:\n"
      "  fabricsim run TOPOLOGY.yaml [--workload W.yaml ...] [--backend packet|flow|hybrid]\n"
      "                [--routing R] [--cc C] [--set key.path=value ...] [--workload-set key.path=value "
      "...]\n"
      "                [--seed N] [--out results.json] [--timeline t.json] [--max-memory SIZE] [--check] "
      "[--quiet]\n"
      "  fabricsim sweep SWEEP.yaml --out DIR [--jobs N] [--resume] [--dry-run] [--quiet] [--shard I/N]\n"
      "                [--max-memory SIZE]\n"
      "                (also under mpirun -np N: the ranks share the points)\n"
      "  fabricsim trace TOPOLOGY.yaml --workload W.yaml|T.json --out trace.json [--format json|chakra]\n"
      "                [--workload-set k=v ...]\n"
      "  fabricsim explain TOPOLOGY.yaml --workload W.yaml [--backend B] [--out explain.json] [--timeline "
      "t.json]\n"
      "  fabricsim topo TOPOLOGY.yaml [--json] [--dot out.dot] [--set key.path=value ...]\n"
      "  fabricsim calibrate MEASUREMENTS... --out calibration.yaml [--topology TESTBED.yaml] [--compute "
      "C.json]\n"
      "  fabricsim validate --calibration C.yaml --topology TESTBED.yaml MEASUREMENTS... [--out R.json]\n"
      "                [--markdown R.md] [--plot R.png] [--backend flow|packet]\n"
      "  fabricsim schema [KEY] [--file topology|workload|sweep|calibration] [--markdown]\n\n"
      "Every subcommand has --help.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (cmd == "run") return fabricsim::runCommand(args);
    if (cmd == "topo") return fabricsim::topoCommand(args);
    if (cmd == "trace") return fabricsim::traceCommand(args);
    if (cmd == "explain") return fabricsim::explainCommand(args);
    if (cmd == "sweep") return fabricsim::sweepCommand(args);
    if (cmd == "calibrate") return fabricsim::calibrateCommand(args);
    if (cmd == "validate") return fabricsim::validateCommand(args);
    if (cmd == "schema") return fabricsim::schemaCommand(args);
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      usage(stdout);
      return 0;
    }
    if (cmd == "--version") {
      // The version and the commit the binary was built from (as results name them).
      std::printf("fabricsim %s (%s)\n", fabricsim::ResultsFile::version().c_str(),
                  fabricsim::ResultsFile::gitDescribe().c_str());
      return 0;
    }
    std::fprintf(stderr, "fabricsim: unknown subcommand '%s'\n\n", cmd.c_str());
    usage(stderr);
    return 2;
  } catch (const fabricsim::InputError& e) {
    for (const auto& d : e.diagnostics()) std::fprintf(stderr, "error: %s\n", d.format().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabricsim: %s\n", e.what());
    return 1;
  }
}
