#include "gpu/common/CollectiveOptions.h"

#include <boost/program_options.hpp>
#include <sstream>
#include <stdexcept>

#include "gpu/common/SizeSweep.h"

namespace fabricsim::gpu {
namespace po = boost::program_options;

namespace {

size_t sizeArg(const std::string& option, const std::string& text) {
  auto v = parseSize(text);
  if (!v)
    throw std::invalid_argument("--" + option + ": expected a size such as 8, 128K, 64M or 1G, found '" +
                                text + "'");
  return *v;
}

}  // namespace

CollectiveOptions CollectiveOptions::parse(int argc, const char* const* argv) {
  CollectiveOptions o;
  std::string collective = "all_reduce", minBytes = "32M", maxBytes = "32M", stepBytes = "1M", op = "sum",
              type = "float";
  long stepFactor = 1, ngpus = 1, iters = 20, warmup = 5, check = 1, root = 0, average = 1;
  po::options_description desc(
      "fabricsim-gpu-collectives: times NCCL collectives over a size sweep (nccl-tests flags)\nOptions");
  desc.add_options()("help,h", "print this help")(
      "collective,C", po::value(&collective)->default_value(collective),
      "all_reduce | all_gather | reduce_scatter | alltoall | broadcast | sendrecv")(
      "minbytes,b", po::value(&minBytes)->default_value(minBytes), "smallest size (8, 128K, 64M, 1G)")(
      "maxbytes,e", po::value(&maxBytes)->default_value(maxBytes), "largest size")(
      "stepfactor,f", po::value(&stepFactor)->default_value(stepFactor), "multiply the size by this (> 1)")(
      "stepbytes,i", po::value(&stepBytes)->default_value(stepBytes), "else add this many bytes")(
      "ngpus,g", po::value(&ngpus)->default_value(ngpus), "GPUs driven by each process")(
      "iters,n", po::value(&iters)->default_value(iters), "timed iterations per size")(
      "warmup_iters,w", po::value(&warmup)->default_value(warmup), "untimed warm-up iterations")(
      "check,c", po::value(&check)->default_value(check), "correctness checks per size (0: none)")(
      "op,o", po::value(&op)->default_value(op), "reduction: sum | prod | max | min | avg")(
      "datatype,d", po::value(&type)->default_value(type),
      "int8 | uint8 | int32 | uint32 | int64 | uint64 | half | float | double | bfloat16")(
      "root,r", po::value(&root)->default_value(root), "root rank (broadcast)")(
      "average,a", po::value(&average)->default_value(average),
      "time reported over ranks: 0 rank 0, 1 mean, 2 min, 3 max")("json,J", po::value(&o.jsonPath),
                                                                  "write the JSON document to this file")(
      "seed", po::value(&o.seed)->default_value(o.seed), "seed of the check pattern");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  std::ostringstream help;
  help << desc;
  o.helpText = help.str();
  o.help = vm.count("help") > 0;

  auto& p = o.params;
  auto c = parseCollective(collective);
  if (!c) throw std::invalid_argument("--collective: unknown collective '" + collective + "'");
  p.collective = *c;
  auto t = parseDataType(type);
  if (!t) throw std::invalid_argument("--datatype: unknown data type '" + type + "'");
  p.type = *t;
  auto r = parseReduceOp(op);
  if (!r) throw std::invalid_argument("--op: unknown reduction '" + op + "' (sum, prod, max, min, avg)");
  p.op = *r;
  p.minBytes = sizeArg("minbytes", minBytes);
  p.maxBytes = sizeArg("maxbytes", maxBytes);
  p.stepBytes = sizeArg("stepbytes", stepBytes);
  if (p.minBytes > p.maxBytes)
    throw std::invalid_argument("--minbytes (" + std::to_string(p.minBytes) +
                                ") is larger than --maxbytes (" + std::to_string(p.maxBytes) + ")");
  if (stepFactor < 1) throw std::invalid_argument("--stepfactor must be >= 1");
  p.stepFactor = static_cast<size_t>(stepFactor);
  if (p.stepFactor <= 1 && p.stepBytes == 0)
    throw std::invalid_argument("--stepbytes must be > 0 when --stepfactor is 1");
  if (ngpus < 1) throw std::invalid_argument("--ngpus must be >= 1");
  if (iters < 1) throw std::invalid_argument("--iters must be >= 1");
  if (warmup < 0) throw std::invalid_argument("--warmup_iters must be >= 0");
  if (check < 0) throw std::invalid_argument("--check must be >= 0");
  if (root < 0) throw std::invalid_argument("--root must be >= 0");
  if (average < 0 || average > 3) throw std::invalid_argument("--average must be 0, 1, 2 or 3");
  p.gpusPerProcess = static_cast<int>(ngpus);
  p.iters = static_cast<int>(iters);
  p.warmupIters = static_cast<int>(warmup);
  p.checkIters = static_cast<int>(check);
  p.root = static_cast<int>(root);
  p.average = static_cast<int>(average);
  return o;
}

std::vector<size_t> CollectiveOptions::sizes() const {
  return sweepSizes(params.minBytes, params.maxBytes, params.stepFactor, params.stepBytes);
}

}  // namespace fabricsim::gpu
