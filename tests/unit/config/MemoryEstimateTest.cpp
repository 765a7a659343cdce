// MemoryEstimate: ranks read from each kind of workload spec, the message format, and the
// estimate's shape (what grows it, which backend needs more). Its accuracy against measured peak
// RSS is scripts/memory_model.py's (README, "Memory"); tests/memory checks it against live heap.
#include "sim/config/MemoryEstimate.h"

#include <gtest/gtest.h>

namespace fabricsim {
namespace {

TopologySize fabricOf(int64_t hosts, int gpusPerHost, int64_t links) {
  TopologySize z;
  z.hosts = hosts;
  z.gpus = hosts * gpusPerHost;
  z.links = links;
  return z;
}

TEST(MemoryEstimate, RanksOfEachKindOfJob) {
  const TopologySize fabric = fabricOf(1024, 8, 16384);  // 8,192 GPUs
  WorkloadSpec w;
  w.kind = "training";
  w.training.parallelism.tp = 8;
  w.training.parallelism.pp = 4;
  w.training.parallelism.dp = 16;
  w.training.parallelism.cp = 2;
  EXPECT_EQ(estimatedRanks(w, fabric), 8 * 4 * 16 * 2);
  w.training.parallelism.dp = 1 << 20;  // more than the fabric has: at most its GPUs
  EXPECT_EQ(estimatedRanks(w, fabric), 8192);

  w = WorkloadSpec{};
  w.kind = "collective";
  w.collective.hosts = 4;  // GPUs per host: the topology's
  EXPECT_EQ(estimatedRanks(w, fabric), 32);
  w.collective.gpusPerHost = 2;
  EXPECT_EQ(estimatedRanks(w, fabric), 8);
  w.collective = {};
  w.collective.ranks = 100;
  EXPECT_EQ(estimatedRanks(w, fabric), 100);

  w = WorkloadSpec{};
  w.kind = "pattern";  // gpus 0: every GPU
  EXPECT_EQ(estimatedRanks(w, fabric), 8192);
  w.pattern.gpus = 64;
  EXPECT_EQ(estimatedRanks(w, fabric), 64);

  EXPECT_FALSE(runsPrograms(w));

  w = WorkloadSpec{};
  w.kind = "trace";  // its ranks are in a file not yet read
  EXPECT_EQ(estimatedRanks(w, fabric), 8192);
  EXPECT_TRUE(runsPrograms(w));
}

TEST(MemoryEstimate, GrowsWithTheFabricAndTheJobsAndThePacketBackendNeedsMore) {
  const TopologySize small = fabricOf(128, 1, 384), large = fabricOf(65536, 1, 196608);
  for (const char* b : {"packet", "flow", "hybrid"}) {
    EXPECT_GT(estimateMemory(large, b, 0).total(), estimateMemory(small, b, 0).total()) << b;
    EXPECT_GT(estimateMemory(small, b, 4096).total(), estimateMemory(small, b, 0).total()) << b;
    EXPECT_GT(estimateMemory(small, b, 0).total(), 0) << b;
  }
  // Every port of the packet backend has egress queues and flow-control state; a link of the
  // flow backend is a record of its capacity and its flows.
  EXPECT_GT(estimateMemory(large, "packet", 0).total(), estimateMemory(large, "flow", 0).total());
  // The hybrid backend's replicas are whole flow-level runs: more of them, more memory.
  EXPECT_GT(estimateMemory(large, "hybrid", 1000, 4).total(),
            estimateMemory(large, "hybrid", 1000, 1).total());
  EXPECT_DOUBLE_EQ(estimateMemory(large, "hybrid", 1000, 1).total(),
                   estimateMemory(large, "flow", 1000).total());
}

TEST(MemoryEstimate, SizesForMessages) {
  EXPECT_EQ(formatMemory(0), "0 B");
  EXPECT_EQ(formatMemory(1023), "1023 B");
  EXPECT_EQ(formatMemory(1024), "1.00 KiB");
  EXPECT_EQ(formatMemory(850.0 * 1024 * 1024), "850 MiB");
  EXPECT_EQ(formatMemory(23.4 * 1024 * 1024 * 1024), "23.4 GiB");
  EXPECT_EQ(formatMemory(1.2 * 1024.0 * 1024 * 1024 * 1024), "1.20 TiB");
}

}  // namespace
}  // namespace fabricsim
