// MachineMemory: how much memory this process may use: the machine's physical memory, lowered by
// a cgroup limit (a container, a Slurm job's memory.max) or an address-space rlimit when either is
// set.
// Leaves out: memory other processes are using now (the limit is what the run may grow to, not
// what is free this second) and swap.
// Units: bytes.
#pragma once

#include <cstdint>

namespace fabricsim {

/// The memory limit in bytes; 0 when none of the sources could be read.
uint64_t machineMemoryLimit();

}  // namespace fabricsim
