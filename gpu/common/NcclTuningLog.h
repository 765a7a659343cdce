// NcclTuningLog: what NCCL chose for each collective, read back from its own debug log.
//
// Models: with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS including TUNING, rank 0 of a communicator
// logs one line per collective it enqueues (src/enqueue.cc, NCCL 2.19 and later):
//   "<host>:<pid>:<tid> [<dev>] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128
//    channel{Lo..Hi}={0..15}"
// and at init "NCCL INFO NCCL version 2.30.7+cuda12.9". parse() reads every such line of a log
// (other lines are skipped); choiceFor() says what a sweep's size ran with: the most frequent
// (algorithm, protocol, channels) among the lines of that operation and byte count.
// Leaves out: NCCL versions whose tuning line has another layout (nothing is found: the harness
// records the choice as unknown), and the CollNet / NVLS head details.
// Units: bytes (as NCCL prints them: the call's count x element size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim::gpu {

struct NcclChoice {
  std::string function;   ///< NCCL's name: "AllReduce", "AllGather", ...
  uint64_t bytes = 0;     ///< the call's count x element size
  std::string algorithm;  ///< lower case, fabricsim's spelling: "ring", "tree", "nvls", "nvls_tree", ...
  std::string protocol;   ///< "ll", "ll128" or "simple"
  int channels = 0;       ///< Hi - Lo + 1
};

class NcclTuningLog {
 public:
  /// Every tuning line of `text`, in order.
  static std::vector<NcclChoice> parse(const std::string& text);
  /// "2.30.7+cuda12.9" from the first "NCCL version" line; nullopt when there is none.
  static std::optional<std::string> version(const std::string& text);
  /// The most frequent choice among `choices` for `function` and `bytes` (ties: the first seen);
  /// nullopt when there is none.
  static std::optional<NcclChoice> choiceFor(const std::vector<NcclChoice>& choices,
                                             const std::string& function, uint64_t bytes);
  /// NCCL's function name of a fabricsim collective name ("all_reduce" -> "AllReduce", ...;
  /// "sendrecv" and "alltoall" -> "" : they are point-to-point, without a tuning line).
  static std::string functionName(const std::string& collective);
  /// The bytes NCCL's tuning line gives for a sweep row of `rowBytes` (nccl-tests' size column)
  /// on `ranks` ranks: all_gather and reduce_scatter pass NCCL each rank's share, the others the
  /// whole buffer.
  static uint64_t ncclBytes(const std::string& collective, uint64_t rowBytes, int ranks);

  /// Asks NCCL to log its choices to a file of this process: if neither NCCL_DEBUG nor
  /// NCCL_DEBUG_FILE is set (`get` reads the environment), sets NCCL_DEBUG=INFO,
  /// NCCL_DEBUG_SUBSYS=INIT,TUNING and NCCL_DEBUG_FILE=<dir>/fabricsim-nccl-<pid>.log through
  /// `set` and returns that path; otherwise leaves the user's settings alone and returns nullopt
  /// (the JSON then records no choices). Call it before NCCL initialises.
  template <class Get, class Set>
  static std::optional<std::string> captureTo(const std::string& dir, long pid, Get&& get, Set&& set) {
    if (get("NCCL_DEBUG") != nullptr || get("NCCL_DEBUG_FILE") != nullptr) return std::nullopt;
    const std::string path = dir + "/fabricsim-nccl-" + std::to_string(pid) + ".log";
    set("NCCL_DEBUG", "INFO");
    set("NCCL_DEBUG_SUBSYS", "INIT,TUNING");
    set("NCCL_DEBUG_FILE", path.c_str());
    return path;
  }
};

}  // namespace fabricsim::gpu
