// WorkloadSpec: the value-type description of one workload read from a workload YAML file.
//
// Models: `kind: pattern` synthetic traffic (permutation, incast, all-to-all) with its message
// size, start time and repetitions. Later kinds (collective, training, trace) extend it.
// Leaves out: behaviour; sim/workload turns it into transfers on a Fabric.
// Units: Bytes, Time (ps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/Time.h"
#include "sim/core/Units.h"

namespace fabricsim {

enum class PatternKind { Permutation, Incast, AllToAll };

struct PatternSpec {
  PatternKind pattern = PatternKind::Permutation;
  Bytes messageSize = 1024 * 1024;
  Time start = Time::zero();
  /// Each sender sends its message this many times, one after another (closed loop: the next
  /// starts when the previous one has been delivered, plus `gap`).
  int repetitions = 1;
  Time gap = Time::zero();
  int incastSenders = 0;      ///< incast: number of senders (0 = every other GPU)
  uint32_t incastReceiver = 0;  ///< incast: the receiving GPU rank
  int trafficClass = 0;
  /// GPUs the pattern runs on: [firstGpu, firstGpu + gpus). gpus = 0 means all GPUs.
  uint32_t firstGpu = 0;
  uint32_t gpus = 0;
  /// Queue pairs (UDP source-port entropy values) per sender/receiver pair; flows round-robin
  /// their repetitions over them.
  int qpsPerPair = 1;
};

struct WorkloadSpec {
  std::string file;  ///< path it was read from
  std::string name;  ///< defaults to the file's stem
  std::string kind = "pattern";
  PatternSpec pattern;
};

}  // namespace fabricsim
