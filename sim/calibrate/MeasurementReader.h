// MeasurementReader: reads any measurement file `fabricsim calibrate` and `validate` accept,
// choosing the reader by content:
//   nccl-tests text (our gpu/ harness prints the same layout)     -> NcclTestsParser
//   the gpu/ harness's collective JSON (tool fabricsim-gpu-collectives, schema 2: the document
//                  gpu/common/CollectiveReport.h describes: op, ranks, hosts[], gpus_per_host,
//                  gpu {model}, nccl {version, env}, results[] of {size_bytes, count, type,
//                  out_of_place / in_place {time_us, algbw_GBps, busbw_GBps, wrong}, nccl
//                  {algorithm, protocol, channels}})                -> one Measurement; any other
//                  JSON (the harness's compute result, another schema) is refused, naming it
//   CSV tables as published in shared/calibration: a header row naming size_bytes (or
//                  size_bytes_assumed) and any of count, type, oop_time_us, oop_algbw_GBps,
//                  oop_busbw_GBps, oop_wrong, ip_time_us, ip_algbw_GBps, ip_busbw_GBps,
//                  ip_wrong, busbw_GBps_inplace                  -> one Measurement
//   YAML tables   {tables: [{id, nodes, gpus_per_node, ranks, env, rows: [[size, count,
//                  oop_time_us, oop_algbw, oop_busbw, ip_time_us, ip_algbw, ip_busbw]]}]}
//                                                                -> one Measurement per table
// What a published table does not say (the op, ranks, hosts) comes from a comment line
// '# fabricsim: op=all_reduce ranks=8 hosts=1 gpu=H100 algorithm=ring' (validation/data/ adds
// one to each copy) or from the caller's Overrides, which win over everything in the file.
// Leaves out: compute results (ComputeFit reads the harness's compute JSON).
// Units: as Measurement.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/calibrate/Measurement.h"

namespace fabricsim {

class MeasurementReader {
 public:
  /// The harness collective JSON this reader reads (gpu/common/CollectiveReport's kTool and
  /// kSchema; sim/ does not include gpu/, a test checks that the two agree).
  static constexpr const char* kHarnessTool = "fabricsim-gpu-collectives";
  static constexpr int kHarnessSchema = 2;

  /// What the command line says about measurements (each unset field leaves the file's value).
  struct Overrides {
    std::optional<CollectiveOp> op;
    uint32_t ranks = 0;
    uint32_t gpusPerHost = 0;
  };

  /// Reads `path` (FILE#ID: only the table with that id of a YAML file with several); throws
  /// InputError naming file, line and what was expected.
  static std::vector<Measurement> read(const std::string& path, const Overrides& overrides);
  static std::vector<Measurement> read(const std::string& path);
  /// Reads every file of a command line, with the overrides its options give (`op` empty, or
  /// `ranks` / `gpusPerHost` 0: what each file says). Throws one InputError with the problems of
  /// every file (and of `op`, the name of a collective).
  static std::vector<Measurement> readAll(const std::vector<std::string>& paths, const std::string& op,
                                          uint32_t ranks, uint32_t gpusPerHost);
  /// Same, from text; `fileName` names it and its extension picks CSV / YAML / JSON.
  static std::vector<Measurement> parse(const std::string& text, const std::string& fileName,
                                        const Overrides& overrides);
  static std::vector<Measurement> parse(const std::string& text, const std::string& fileName);
};

}  // namespace fabricsim
