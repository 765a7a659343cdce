// Chakra execution traces: files built here with the schema's own messages (as a PyTorch
// converter or ASTRA-sim's generators write them) read into jobs whose times are worked by hand,
// the export of a generated job read back to the same job (its collectives' SM shares included),
// and bad traces refused with the file and the node.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "sim/core/Error.h"
#include "sim/flow/FlowFabric.h"
#include "sim/routing/EcmpFib.h"
#include "sim/topology/TopologyBuilder.h"
#include "sim/workload/JobExecutor.h"
#include "sim/workload/TrainingTraceBuilder.h"
#include "sim/workload/chakra/ChakraReader.h"
#include "sim/workload/chakra/ChakraWriter.h"
#include "sim/workload/chakra/chakra_et.pb.h"
#include "tests/support/ChakraEt.h"
#include "tests/support/ComputeOnlyRun.h"
#include "tests/support/PacketBench.h"
#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

namespace pb = ::fabricsim::chakra;
using testsupport::runComputeOnly;
using testsupport::writeChakraEt;

void attrInt(pb::Node& n, const char* name, int64_t v, bool asInt32 = false) {
  auto* a = n.add_attr();
  a->set_name(name);
  if (asInt32)
    a->set_int32_val(static_cast<int32_t>(v));
  else
    a->set_int64_val(v);
}

pb::Node comp(uint64_t id, uint64_t micros, std::vector<uint64_t> deps = {}, bool cpu = false) {
  pb::Node n;
  n.set_id(id);
  n.set_name("comp" + std::to_string(id));
  n.set_type(pb::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : deps) n.add_data_deps(d);
  auto* a = n.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(cpu);
  return n;
}

pb::Node coll(uint64_t id, pb::CollectiveCommType type, int64_t size, const std::string& pg,
              std::vector<uint64_t> deps) {
  pb::Node n;
  n.set_id(id);
  n.set_name("coll" + std::to_string(id));
  n.set_type(pb::COMM_COLL_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  attrInt(n, "comm_type", type);
  attrInt(n, "comm_size", size);
  if (!pg.empty()) {
    auto* a = n.add_attr();
    a->set_name("pg_name");
    a->set_string_val(pg);
  }
  return n;
}

pb::Node p2p(uint64_t id, bool send, uint32_t src, uint32_t dst, int64_t size, std::vector<uint64_t> deps) {
  pb::Node n;
  n.set_id(id);
  n.set_name(send ? "send" : "recv");
  n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
  for (uint64_t d : deps) n.add_ctrl_deps(d);
  attrInt(n, "comm_src", src, true);  // int32, as ASTRA-sim's generators write them
  attrInt(n, "comm_dst", dst, true);
  attrInt(n, "comm_size", size);
  attrInt(n, "comm_tag", 0, true);
  return n;
}

Time runOnFlowFabric(const std::shared_ptr<JobTrace>& t, const CollectiveTuning& tuning, int gpusPerHost) {
  TopologySpec spec = testsupport::leafSpineSpec(2, 2, 4);
  spec.hosts.gpusPerHost = gpusPerHost;
  spec.hosts.nicsPerHost = gpusPerHost;
  const auto topo = buildTopology(spec);
  const EcmpFib fib(*topo, spec.routing.hashSeed);
  Simulator sim(1);
  FlowFabric fabric(sim, *topo, spec, fib);
  std::vector<uint32_t> gpus(t->ranks);
  for (uint32_t r = 0; r < t->ranks; ++r) gpus[r] = r;
  JobExecutor exec(sim, &fabric, t, gpus, gpusPerHost, tuning, "job", Time::zero(), true);
  exec.start();
  sim.run();
  EXPECT_TRUE(exec.finished());
  return exec.finishTime();
}

ChakraInput input(const testsupport::TempDir& dir, const std::string& groups = "") {
  ChakraInput in;
  in.prefix = dir.file("et");
  in.commGroups = groups;
  in.name = "chakra";
  in.source = "w.yaml";
  return in;
}

std::string messageOf(const ChakraInput& in) {
  try {
    ChakraReader::read(in);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ChakraTrace, ComputeSendReceiveAndHostNodesWorkedByHand) {
  // Rank 0: 10 us of compute, then a send to rank 1 (control-dependent on it through a CPU op
  // that takes no GPU time), then 4 us after the send. Rank 1: a metadata node, the receive,
  // then 5 us of compute on the data. With communication taking no time the receive completes
  // when the send is issued, at 10 us: rank 1 ends at 15 us, rank 0 at 14 us; the job at 15 us.
  testsupport::TempDir dir;
  pb::Node meta;
  meta.set_id(50);
  meta.set_type(pb::METADATA_NODE);
  writeChakraEt(dir.file("et.0.et"), {comp(1, 10), comp(2, 3, {1}, /*cpu=*/true),
                                      p2p(3, true, 0, 1, 1 << 20, {2}), comp(4, 4, {3})});
  writeChakraEt(dir.file("et.1.et"), {meta, p2p(7, false, 0, 1, 1 << 20, {50}), comp(9, 5, {7})});
  const auto t = ChakraReader::read(input(dir));
  ASSERT_EQ(t->ranks, 2u);
  EXPECT_EQ(t->programs[0].ops.size(), 3u);  // the CPU op is left out
  EXPECT_EQ(t->programs[1].ops.size(), 2u);  // and so is the metadata node
  EXPECT_EQ(runComputeOnly(t), Time::us(15));
}

TEST(ChakraTrace, CollectivesRunOnTheirProcessGroupWithTheConvertersSizes) {
  // Four ranks, process groups tp0 = {0, 1} and tp1 = {2, 3}: rank r computes 3, 5, 7, 9 us,
  // all-reduces on its group, then computes 2 us. With communication taking no time, tp0 meets at
  // 5 us (ranks 0 and 1 end at 7) and tp1 at 9 (ranks 2 and 3 end at 11): the job takes 11 us.
  // An all-gather's comm_size is the rank's shard (Chakra's PyTorch converter records the input):
  // 1 KiB each on a group of 2 is nccl-tests' 2 KiB; a reduce-scatter's is its whole input.
  testsupport::TempDir dir;
  const std::string groups = dir.write("groups.json", R"({"tp0": [0, 1], "tp1": [2, 3]})");
  const uint64_t micros[] = {3, 5, 7, 9};
  for (uint32_t r = 0; r < 4; ++r) {
    const std::string pg = r < 2 ? "tp0" : "tp1";
    writeChakraEt(dir.file("et." + std::to_string(r) + ".et"),
                  {comp(1, micros[r]), coll(2, pb::ALL_REDUCE, 4096, pg, {1}), comp(3, 2, {2}),
                   coll(4, pb::ALL_GATHER, 1024, pg, {3}), coll(5, pb::REDUCE_SCATTER, 8192, pg, {4})});
  }
  const auto t = ChakraReader::read(input(dir, groups));
  EXPECT_EQ(runComputeOnly(t), Time::us(11));
  const auto& ops = t->programs[2].ops;
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[1].collective, CollectiveOp::AllReduce);
  EXPECT_EQ(ops[1].bytes, 4096);
  EXPECT_EQ(ops[3].collective, CollectiveOp::AllGather);
  EXPECT_EQ(ops[3].bytes, 2048);
  EXPECT_EQ(ops[4].collective, CollectiveOp::ReduceScatter);
  EXPECT_EQ(ops[4].bytes, 8192);
  const Communicator& c = t->communicators[ops[1].comm];
  EXPECT_EQ(c.groups[c.groupOfRank[2]], (std::vector<uint32_t>{2, 3}));
}

TEST(ChakraTrace, AnExportedTrainingJobReadsBackToTheSameJob) {
  // Round trip: a generated job (TP 2, PP 2, DP 2 on 8 GPUs) written as Chakra ET and read back
  // runs exactly as the job itself, without communication and on a flow fabric (every collective,
  // send and receive with its group, size and dependencies; stream order kept as control
  // dependencies).
  TrainingSpec spec;
  spec.model.layers = 4;
  spec.model.hidden = 512;
  spec.model.heads = 8;
  spec.model.seqLen = 256;
  spec.parallelism.tp = 2;
  spec.parallelism.pp = 2;
  spec.parallelism.dp = 2;
  spec.parallelism.globalBatch = 8;
  // Transformer Engine's overlap: its collectives carry their kernels' SM shares (TE's defaults:
  // 0 for ring exchange, 16 / 132 for the bulk kernels), which the export must keep.
  spec.parallelism.sequenceParallel = true;
  spec.parallelism.tpCommOverlap = true;
  spec.gpu.commSmShare = 0.25;
  auto original = std::make_shared<JobTrace>(buildTrainingTrace(spec, CollectiveTuning{}, "job"));
  testsupport::TempDir dir;
  for (uint32_t r = 0; r < original->ranks; ++r) {
    std::ofstream f(ChakraReader::rankFile(dir.file("et"), r), std::ios::binary);
    f << ChakraWriter::rankFile(*original, r);
  }
  dir.write("groups.json", ChakraWriter::commGroups(*original).dump());
  const auto back = ChakraReader::read(input(dir, dir.file("groups.json")));
  ASSERT_EQ(back->ranks, original->ranks);
  auto shares = [](const JobTrace& t, uint32_t rank) {
    std::vector<double> out;
    for (const TraceOp& op : t.programs[t.programOfRank[rank]].ops)
      if (op.type != OpType::Compute) out.push_back(op.smShare);
    return out;
  };
  bool own = false;
  for (uint32_t r = 0; r < original->ranks; ++r) {
    EXPECT_EQ(shares(*back, r), shares(*original, r)) << "rank " << r;
    for (double v : shares(*original, r)) own = own || v >= 0;
  }
  EXPECT_TRUE(own) << "the job has collectives with their own SM share";
  EXPECT_EQ(runComputeOnly(back), runComputeOnly(original));
  EXPECT_EQ(runOnFlowFabric(back, CollectiveTuning{}, 4), runOnFlowFabric(original, CollectiveTuning{}, 4));
}

TEST(ChakraTrace, BadTracesNameTheFileAndTheNode) {
  testsupport::TempDir dir;
  auto expectError = [&](const std::string& groups, const std::vector<std::string>& parts) {
    const std::string msg = messageOf(input(dir, groups));
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "expected '" << p << "' in: " << msg;
  };
  // No files at all.
  expectError("", {"w.yaml", "et.0.et"});
  // A dependency on an id the file does not have.
  writeChakraEt(dir.file("et.0.et"), {comp(1, 1, {42})});
  expectError("", {"et.0.et", "node 1", "depends on node 42"});
  // A cycle.
  writeChakraEt(dir.file("et.0.et"), {comp(1, 1, {2}), comp(2, 1, {1})});
  expectError("", {"et.0.et", "cycle"});
  // Duplicate ids.
  writeChakraEt(dir.file("et.0.et"), {comp(1, 1), comp(1, 1)});
  expectError("", {"et.0.et", "duplicate node id 1"});
  // A process group the comm-groups file does not have; then none given.
  const std::string groups = dir.write("g.json", R"({"dp": [0]})");
  writeChakraEt(dir.file("et.0.et"), {coll(1, pb::ALL_REDUCE, 64, "tp", {})});
  expectError(groups, {"et.0.et", "node 1", "process group 'tp'", "g.json"});
  expectError("", {"process group 'tp'", "set comm_groups"});
  // A collective NCCL-style simulation does not have.
  writeChakraEt(dir.file("et.0.et"), {coll(1, pb::REDUCE, 64, "", {})});
  expectError("", {"node 1", "comm_type 1 is not simulated"});
  // An SM share outside [0, 1).
  pb::Node greedy = coll(1, pb::ALL_REDUCE, 64, "", {});
  auto* share = greedy.add_attr();
  share->set_name("fabricsim_sm_share");
  share->set_double_val(1.5);
  writeChakraEt(dir.file("et.0.et"), {greedy});
  expectError("", {"et.0.et", "node 1", "fabricsim_sm_share"});
  // A missing attribute.
  pb::Node bare;
  bare.set_id(3);
  bare.set_type(pb::COMM_COLL_NODE);
  writeChakraEt(dir.file("et.0.et"), {bare});
  expectError("", {"node 3", "comm_type"});
  // A send nobody receives: rank 1's file exists but has no receive.
  writeChakraEt(dir.file("et.0.et"), {p2p(1, true, 0, 1, 8, {})});
  writeChakraEt(dir.file("et.1.et"), {comp(1, 1)});
  expectError("", {"rank 0 sends 1 messages to rank 1", "receives 0"});
  // A truncated file.
  writeChakraEt(dir.file("et.1.et"), {comp(1, 1), comp(2, 1)});
  std::string bytes;
  {
    std::ifstream f(dir.file("et.1.et"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::ofstream(dir.file("et.1.et"), std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 3);
  writeChakraEt(dir.file("et.0.et"), {comp(1, 1)});
  expectError("", {"et.1.et", "truncated"});
  // Ranks of a process group that call it differently.
  std::ofstream(dir.file("g2.json")) << R"({"all": [0, 1]})";
  writeChakraEt(dir.file("et.0.et"), {coll(1, pb::ALL_REDUCE, 64, "all", {})});
  writeChakraEt(dir.file("et.1.et"), {coll(1, pb::ALL_REDUCE, 128, "all", {})});
  expectError(dir.file("g2.json"), {"et.1.et", "differs from rank 0"});
}

}  // namespace
}  // namespace fabricsim
