// JobExecutor: stream order, dependencies, send/recv matching, collective synchronisation,
// iterations, and the trace file round trip.
#include "sim/workload/JobExecutor.h"

#include <gtest/gtest.h>

#include "sim/core/Error.h"
#include "sim/workload/TraceFile.h"
#include "tests/support/ComputeOnlyRun.h"
#include "tests/support/PacketBench.h"

namespace fabricsim {
namespace {

using testsupport::runComputeOnly;

TraceOp compute(uint8_t stream, Time d, std::vector<uint32_t> deps = {}) {
  TraceOp op;
  op.type = OpType::Compute;
  op.stream = stream;
  op.duration = d;
  op.deps = std::move(deps);
  return op;
}

TraceOp message(OpType type, uint8_t stream, int offset, Bytes bytes, std::vector<uint32_t> deps = {}) {
  TraceOp op;
  op.type = type;
  op.stream = stream;
  op.comm = 0;
  op.peerOffset = offset;
  op.bytes = bytes;
  op.deps = std::move(deps);
  return op;
}

/// A trace of `ranks` ranks in one communicator "all" with the given programs.
std::shared_ptr<JobTrace> makeTrace(uint32_t ranks, std::vector<Program> programs, std::vector<uint32_t> programOf,
                                    int iterations = 1) {
  auto t = std::make_shared<JobTrace>();
  t->name = "t";
  t->ranks = ranks;
  t->iterations = iterations;
  Communicator all;
  all.name = "all";
  std::vector<uint32_t> g;
  for (uint32_t r = 0; r < ranks; ++r) g.push_back(r);
  all.groups.push_back(g);
  t->communicators.push_back(all);
  t->programs = std::move(programs);
  t->programOfRank = std::move(programOf);
  t->finalize("test");
  return t;
}

TEST(JobExecutorTest, StreamsRunConcurrentlyAndDependenciesOrderThem) {
  Program p;
  p.streams = {"a", "b"};
  p.ops.push_back(compute(0, Time::us(10)));      // 0: stream a, 0..10
  p.ops.push_back(compute(1, Time::us(4)));       // 1: stream b, 0..4
  p.ops.push_back(compute(1, Time::us(3), {0}));  // 2: stream b, waits for op 0: 10..13
  p.ops.push_back(compute(0, Time::us(1)));       // 3: stream a after op 0: 10..11
  EXPECT_EQ(runComputeOnly(makeTrace(1, {p}, {0})), Time::us(13));
}

TEST(JobExecutorTest, SendAndReceiveMatchInOrderAndCarryDependencies) {
  Program sender;
  sender.streams = {"compute", "send"};
  sender.ops.push_back(compute(0, Time::us(10)));
  sender.ops.push_back(message(OpType::Send, 1, +1, 1 << 20, {0}));
  sender.ops.push_back(compute(0, Time::us(10)));
  sender.ops.push_back(message(OpType::Send, 1, +1, 1 << 20, {2}));
  Program receiver;
  receiver.streams = {"compute", "recv"};
  receiver.ops.push_back(message(OpType::Recv, 1, -1, 1 << 20));
  receiver.ops.push_back(message(OpType::Recv, 1, -1, 1 << 20));
  receiver.ops.push_back(compute(0, Time::us(5), {0}));  // needs the first message: 10..15
  receiver.ops.push_back(compute(0, Time::us(5), {1}));  // needs the second: 20..25
  auto t = makeTrace(2, {sender, receiver}, {0, 1});
  EXPECT_EQ(runComputeOnly(t), Time::us(25));

  // Over the packet backend the message takes its network time: at least 1 MiB at 100 Gb/s.
  testsupport::PacketBench bench(testsupport::leafSpineSpec(2, 1, 2));
  JobExecutor exec(bench.sim, &bench.fabric, t, {0, 2}, 1, CollectiveTuning{}, "job", Time::zero(), true);
  exec.start();
  bench.sim.run();
  ASSERT_TRUE(exec.finished());
  const Time wire = serializationTime(1 << 20, BitRate::gbps(100));
  EXPECT_GT(exec.finishTime(), Time::us(20) + wire + Time::us(5));
  EXPECT_LT(exec.finishTime(), Time::us(20) + wire * 2 + Time::us(5) + Time::us(20));
  EXPECT_EQ(exec.messages(), 2u);
  EXPECT_EQ(bench.fabric.flowRecords().size(), static_cast<size_t>(CollectiveTuning{}.channels) * 2);
}

TEST(JobExecutorTest, CollectiveStartsWhenTheLastMemberArrives) {
  std::vector<Program> progs;
  for (int r = 0; r < 3; ++r) {
    Program p;
    p.streams = {"compute"};
    p.labels = {"coll"};
    p.ops.push_back(compute(0, Time::us(1 + 4 * r)));  // ranks arrive at 1, 5, 9 us
    TraceOp c;
    c.type = OpType::Collective;
    c.collective = CollectiveOp::AllReduce;
    c.comm = 0;
    c.bytes = 1 << 20;
    c.label = 0;
    p.ops.push_back(c);
    p.ops.push_back(compute(0, Time::us(2)));
    progs.push_back(p);
  }
  EXPECT_EQ(runComputeOnly(makeTrace(3, progs, {0, 1, 2})), Time::us(11));
}

TEST(JobExecutorTest, IterationsRepeatTheProgram) {
  Program p;
  p.streams = {"compute"};
  p.ops.push_back(compute(0, Time::us(7)));
  std::vector<Time> ends;
  EXPECT_EQ(runComputeOnly(makeTrace(2, {p}, {0, 0}, 3), &ends), Time::us(21));
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[0], Time::us(7));
  EXPECT_EQ(ends[1], Time::us(14));
}

/// Runs a two-rank trace on the packet backend, ranks on two leaves (GPUs 0 and 2); its finish.
Time runOnTwoLeaves(const std::shared_ptr<JobTrace>& t) {
  testsupport::PacketBench bench(testsupport::leafSpineSpec(2, 1, 2));
  JobExecutor exec(bench.sim, &bench.fabric, t, {0, 2}, 1, CollectiveTuning{}, "job", Time::zero(), true);
  exec.start();
  bench.sim.run();
  EXPECT_TRUE(exec.finished());
  return exec.finishTime();
}

// SM contention (JobTrace::commSmShare = s): a compute op of C that runs while a message moves
// for T (from 0: both sides post at once) does T (1 - s) of its work then, the rest after, so
// it ends at T + C - T (1 - s) = C + s T. T is measured by the same message alone; the fabric
// does not see the compute, so T is the same. Tolerance 2 ps (two roundings of the reschedule).
TEST(JobExecutorTest, ComputeSlowsWhileItsRanksDataMoves) {
  const Time c = Time::us(500);
  auto trace = [&](bool withCompute, double share) {
    Program sender;
    sender.streams = {"compute", "send"};
    if (withCompute) sender.ops.push_back(compute(0, c));
    sender.ops.push_back(message(OpType::Send, 1, +1, 4 << 20));
    Program receiver;
    receiver.streams = {"compute", "recv"};
    receiver.ops.push_back(message(OpType::Recv, 1, -1, 4 << 20));
    auto t = makeTrace(2, {sender, receiver}, {0, 1});
    t->commSmShare = share;
    return t;
  };
  const auto run = runOnTwoLeaves;
  const Time transfer = run(trace(false, 0.25));
  ASSERT_GT(transfer, Time::us(300));  // 4 MiB at 100 Gb/s: 336 us, so it ends inside the compute
  ASSERT_LT(transfer, c);
  const double expected = static_cast<double>(c.picos()) + 0.25 * static_cast<double>(transfer.picos());
  EXPECT_NEAR(static_cast<double>(run(trace(true, 0.25)).picos()), expected, 2.0);
  // Without the share, the compute keeps its duration.
  EXPECT_EQ(run(trace(true, 0.0)), c);
}

TEST(JobExecutorTest, AnOpsOwnShareReplacesTheTracesAndConcurrentSharesAreNotAdded) {
  // A 500 us compute beside 4 MiB sends to the next rank, each on its own stream, with the
  // trace's share 0.25. One send with its own share 0.5: c + 0.5 T (T: the same sends without
  // the compute); with share 0 (copy engines): c. Two sends with 0.3 each, moving together for
  // the whole T: c + 0.3 T (the largest moving share applies; added up it would be 0.6 while
  // both move).
  const Time c = Time::us(500);
  auto trace = [&](bool withCompute, const std::vector<double>& shares) {
    Program sender, receiver;
    sender.streams = {"compute", "s1", "s2"};
    receiver.streams = {"compute", "r1", "r2"};
    if (withCompute) sender.ops.push_back(compute(0, c));
    for (size_t i = 0; i < shares.size(); ++i) {
      TraceOp m = message(OpType::Send, static_cast<uint8_t>(1 + i), +1, 2 << 20);
      m.smShare = shares[i];
      sender.ops.push_back(m);
      receiver.ops.push_back(message(OpType::Recv, static_cast<uint8_t>(1 + i), -1, 2 << 20));
    }
    auto t = makeTrace(2, {sender, receiver}, {0, 1});
    t->commSmShare = 0.25;
    return t;
  };
  const auto run = runOnTwoLeaves;
  const auto ps = [](Time t) { return static_cast<double>(t.picos()); };
  const Time one = run(trace(false, {0.5}));
  ASSERT_LT(one, c);
  EXPECT_NEAR(ps(run(trace(true, {0.5}))), ps(c) + 0.5 * ps(one), 2.0);
  EXPECT_EQ(run(trace(true, {0.0})), c);
  const Time both = run(trace(false, {0.3, 0.3}));
  ASSERT_LT(both, c);
  EXPECT_NEAR(ps(run(trace(true, {0.3, 0.3}))), ps(c) + 0.3 * ps(both), 2.0);
}

/// Four ranks, each one ring all-reduce of `bytes` labelled "ar".
std::shared_ptr<JobTrace> ringAllReduceTrace(Bytes bytes) {
  Program p;
  p.streams = {"compute"};
  p.labels = {"ar"};
  TraceOp c;
  c.type = OpType::Collective;
  c.collective = CollectiveOp::AllReduce;
  c.algorithm = CollectiveAlgorithm::Ring;
  c.bytes = bytes;
  p.ops.push_back(c);
  return makeTrace(4, {p}, {0, 0, 0, 0});
}

TEST(JobExecutorTest, RingAllReduceOverThePacketBackendCompletesForEveryMember) {
  auto t = ringAllReduceTrace(4 << 20);
  testsupport::PacketBench bench(testsupport::leafSpineSpec(2, 2, 2));
  JobExecutor exec(bench.sim, &bench.fabric, t, {0, 1, 2, 3}, 1, CollectiveTuning{}, "job", Time::zero(), true);
  exec.start();
  bench.sim.run();
  ASSERT_TRUE(exec.finished());
  const auto sums = exec.collectiveSummaries();
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].count, 1u);
  EXPECT_EQ(sums[0].ranks, 4u);
  EXPECT_EQ(sums[0].algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(sums[0].label, "ar");
  // Ring all-reduce: each rank sends 2(N-1)/N of the buffer.
  Bytes sent = 0;
  for (const auto& r : bench.fabric.flowRecords()) sent += r.bytes;
  EXPECT_EQ(sent, 4 * (2 * 3 * (4 << 20) / 4));
}

TEST(JobExecutorTest, CollectiveSummariesNameTheProtocolTheCallRanWith) {
  // A job's collectives run with the protocol NCCL's tuner picks under `protocol: auto` (an
  // 8 KiB ring all-reduce over 4 hosts is latency-bound: LL, as NCCL runs small calls) or the
  // one the tuning pins, and the summary says which.
  auto t = ringAllReduceTrace(8 << 10);
  for (const auto& [setting, expect] : {std::pair{CollectiveProtocol::Auto, CollectiveProtocol::LL},
                                        std::pair{CollectiveProtocol::LL128, CollectiveProtocol::LL128}}) {
    CollectiveTuning tuning;
    tuning.protocol = setting;
    testsupport::PacketBench bench(testsupport::leafSpineSpec(2, 2, 2));
    JobExecutor exec(bench.sim, &bench.fabric, t, {0, 1, 2, 3}, 1, tuning, "job", Time::zero(), true);
    exec.start();
    bench.sim.run();
    ASSERT_TRUE(exec.finished());
    const auto sums = exec.collectiveSummaries();
    ASSERT_EQ(sums.size(), 1u);
    EXPECT_EQ(sums[0].protocol, expect);
  }
}

TEST(JobExecutorTest, TraceFileRoundTripIsLossless) {
  Program p;
  p.streams = {"compute", "send"};
  p.labels = {"fwd", "tp"};
  p.ops.push_back(compute(0, Time::ps(123456789)));
  TraceOp c;
  c.type = OpType::Collective;
  c.collective = CollectiveOp::Broadcast;
  c.algorithm = CollectiveAlgorithm::Ring;
  c.bytes = 1000;
  c.root = 1;
  c.label = 1;
  c.deps = {0};
  c.smShare = 0.125;
  p.ops.push_back(c);
  p.ops.push_back(message(OpType::Send, 1, +1, 77, {1}));
  p.ops.push_back(message(OpType::Recv, 1, -1, 77, {1}));
  auto t = makeTrace(4, {p, p}, {0, 0, 1, 1}, 2);
  t->placement = {3, 2, 1, 0};
  t->tuning.channels = 3;
  t->tuning.stepLatencyNetwork = Time::ps(4321);
  const TraceSource src{"w.yaml", "kind: training\n", {"iterations=2"}};
  const nlohmann::json doc = traceToJson(*t, src);
  TraceSource back;
  const auto t2 = traceFromJson(doc, "t.json", &back);
  EXPECT_EQ(traceToJson(*t2, back).dump(), doc.dump());
  EXPECT_EQ(back.workloadSets, src.workloadSets);
  EXPECT_EQ(t2->programs[0].ops[0].duration, Time::ps(123456789));
  EXPECT_EQ(t2->tuning.channels, 3);
  EXPECT_EQ(t2->programs[0].ops[1].smShare, 0.125);
  EXPECT_LT(t2->programs[0].ops[2].smShare, 0.0);  // not given: the trace's share
  EXPECT_EQ(t2->programOfRank, (std::vector<uint32_t>{0, 0, 1, 1}));
}

TEST(JobExecutorTest, MalformedTracesAreRefusedWithTheJsonPath) {
  Program p;
  p.streams = {"compute"};
  p.ops.push_back(compute(0, Time::us(1)));
  const auto t = makeTrace(2, {p}, {0, 0});
  const nlohmann::json good = traceToJson(*t, {});
  auto keyOf = [](const nlohmann::json& doc) {
    try {
      traceFromJson(doc, "bad.json");
    } catch (const InputError& e) {
      EXPECT_EQ(e.diagnostics().front().file, "bad.json");
      return e.diagnostics().front().key;
    }
    ADD_FAILURE() << "expected an InputError";
    return std::string();
  };
  nlohmann::json d = good;
  d["programs"][0]["ops"][0]["type"] = "dance";
  EXPECT_EQ(keyOf(d), "programs[0].ops[0].type");
  d = good;
  d["programs"][0]["ops"][0].erase("duration_ps");
  EXPECT_EQ(keyOf(d), "programs[0].ops[0].duration_ps");
  d = good;
  d["ranks"] = "two";
  EXPECT_EQ(keyOf(d), "ranks");
  d = good;
  d["format"] = "other";
  EXPECT_EQ(keyOf(d), "format");
  d = good;
  d["program_of_rank"] = nlohmann::json::array({nlohmann::json::array({0, 5})});
  EXPECT_EQ(keyOf(d), "program_of_rank[0]");
  d = good;
  d["programs"][0]["ops"][0]["sm_share"] = 0.5;  // only communication takes SMs
  EXPECT_EQ(keyOf(d), "programs[0].ops[0].sm_share");
  // Issue 21: values that did not fit were truncated or wrapped, and were built.
  d = good;
  d["ranks"] = 4'000'000'000u;  // fits 32 bits, but is no job (the tables would take 16 GB)
  EXPECT_EQ(keyOf(d), "ranks");
  d = good;
  d["iterations"] = 1ull << 32;  // was truncated to 0
  EXPECT_EQ(keyOf(d), "iterations");
  d = good;
  d["program_of_rank"] =
      nlohmann::json::array({nlohmann::json::array({0, 1}), nlohmann::json::array({0, UINT64_MAX})});
  EXPECT_EQ(keyOf(d), "program_of_rank[1]");  // the run length wrapped the sum
  d = good;
  d["name"] = nlohmann::json::array({nlohmann::json::array({nlohmann::json::array({1})})});
  EXPECT_EQ(keyOf(d), "name");  // described by its size in the message, not dumped
  // A send without its receive left the job unfinished and failed an internal check after the
  // whole run: rank 0 sends to rank 1, which posts nothing.
  Program sender, idle;
  sender.streams = idle.streams = {"compute"};
  sender.ops.push_back(message(OpType::Send, 0, +1, 4096));
  idle.ops.push_back(compute(0, Time::us(1)));
  EXPECT_EQ(keyOf(traceToJson(*makeTrace(2, {sender, idle}, {0, 1}), {})), "programs");
  // Paired, it reads.
  Program receiver = idle;
  receiver.ops.push_back(message(OpType::Recv, 0, -1, 4096));
  EXPECT_NO_THROW(traceFromJson(traceToJson(*makeTrace(2, {sender, receiver}, {0, 1}), {}), "ok.json"));
}

}  // namespace
}  // namespace fabricsim
