// The `nic:` section: transport timer keys per link technology, their defaults, ranges, and the
// file:line diagnostics for keys of the other technology and values out of range.
#include "sim/config/NicSectionReader.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/TopologyLoader.h"
#include "sim/core/Error.h"

namespace fabricsim {
namespace {

const std::string kRoce =
    "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}\n"
    "links: {technology: roce}\n";
const std::string kIb =
    "topology: {kind: leaf-spine, leaves: 2, spines: 1, hosts_per_leaf: 2}\n"
    "links: {technology: infiniband}\n"
    "switch: {pfc: {enabled: false}}\n";

std::vector<Diagnostic> diagnosticsOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    parseTopologyYaml(yaml, "t.yaml", sets);
  } catch (const InputError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

bool hasDiag(const std::vector<Diagnostic>& ds, const std::string& key, int line, const std::string& text) {
  for (const auto& d : ds)
    if (d.key == key && d.line == line && d.message.find(text) != std::string::npos) return true;
  return false;
}

TEST(NicSectionReaderTest, DefaultsFollowNcclAndConnectX) {
  const TopologySpec roce = parseTopologyYaml(kRoce, "t.yaml");
  EXPECT_EQ(roce.nic.retransmitTimeout, Time::ms(1));
  EXPECT_EQ(roce.nic.rtoBackoff, 2.0);
  // Capped at the QP local ACK timeout NCCL sets by default: 4.096 us x 2^20 = 4.294967296 s.
  EXPECT_EQ(roce.nic.maxRto, Time::ps(4'294'967'296'000));
  EXPECT_EQ(roce.nic.retryLimit, 7);  // NCCL_IB_RETRY_CNT
  const TopologySpec ib = parseTopologyYaml(kIb, "t.yaml");
  EXPECT_EQ(ib.nic.localAckTimeout, 20);  // NCCL_IB_TIMEOUT since NCCL 2.23
  EXPECT_EQ(ib.nic.retryCount, 7);
  EXPECT_EQ(ib.nic.reorder, "tolerant");
}

TEST(NicSectionReaderTest, ReadsEachTechnologysTimerKeys) {
  const TopologySpec roce = parseTopologyYaml(
      kRoce + "nic: {retransmit_timeout: 20us, rto_backoff: 1.5, max_rto: 1ms, retry_limit: 12}\n", "t.yaml");
  EXPECT_EQ(roce.nic.retransmitTimeout, Time::us(20));
  EXPECT_EQ(roce.nic.rtoBackoff, 1.5);
  EXPECT_EQ(roce.nic.maxRto, Time::ms(1));
  EXPECT_EQ(roce.nic.retryLimit, 12);
  const TopologySpec ib = parseTopologyYaml(kIb + "nic: {local_ack_timeout: 0, retry_count: 0}\n", "t.yaml");
  EXPECT_EQ(ib.nic.localAckTimeout, 0);  // 0: infinite, accepted
  EXPECT_EQ(ib.nic.retryCount, 0);
  // An initial RTO above the default cap is valid: the cap follows it (no room to back off).
  const TopologySpec big = parseTopologyYaml(kRoce + "nic: {retransmit_timeout: 10s}\n", "t.yaml");
  EXPECT_EQ(big.nic.maxRto, Time::s(10));
}

TEST(NicSectionReaderTest, KeysOfTheOtherTechnologyAreRefusedWithFileAndLine) {
  const auto onIb = diagnosticsOf(kIb + "nic:\n  retransmit_timeout: 1ms\n  retry_limit: 3\n");
  EXPECT_TRUE(hasDiag(onIb, "nic.retransmit_timeout", 5, "local_ack_timeout")) << onIb.size();
  EXPECT_TRUE(hasDiag(onIb, "nic.retry_limit", 6, "retry_count"));
  const auto onRoce = diagnosticsOf(kRoce + "nic: {local_ack_timeout: 14}\n");
  EXPECT_TRUE(hasDiag(onRoce, "nic.local_ack_timeout", 3, "retransmit_timeout"));
  // The technology may come from --set: the file's timer key is then the one in the wrong place.
  const auto viaSet = diagnosticsOf(kRoce + "switch: {pfc: {enabled: false}}\nnic: {rto_backoff: 2}\n",
                                    {"links.technology=infiniband"});
  EXPECT_TRUE(hasDiag(viaSet, "nic.rto_backoff", 4, "InfiniBand NICs"));
}

TEST(NicSectionReaderTest, ValuesOutOfRangeAreRefused) {
  const auto roce = diagnosticsOf(kRoce +
                                  "nic:\n"
                                  "  retransmit_timeout: -1us\n"
                                  "  rto_backoff: 0.5\n"
                                  "  retry_limit: 256\n");
  EXPECT_TRUE(hasDiag(roce, "nic.retransmit_timeout", 4, "non-negative"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kRoce + "nic: {retransmit_timeout: 0us}\n"), "nic.retransmit_timeout", 3,
                      "at least"));
  EXPECT_TRUE(hasDiag(roce, "nic.rto_backoff", 5, "between 1 and 16"));
  EXPECT_TRUE(hasDiag(roce, "nic.retry_limit", 6, "<= 255"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kRoce + "nic: {retransmit_timeout: 1ms, max_rto: 100us}\n"),
                      "nic.max_rto", 3, "max_rto >= retransmit_timeout"));
  EXPECT_TRUE(
      hasDiag(diagnosticsOf(kRoce + "nic: {retransmit_timeout: 5}\n"), "nic.retransmit_timeout", 3, "unit"));
  const auto ib = diagnosticsOf(kIb +
                                "nic:\n"
                                "  local_ack_timeout: 32\n"
                                "  retry_count: 8\n");
  EXPECT_TRUE(hasDiag(ib, "nic.local_ack_timeout", 5, "<= 31"));
  EXPECT_TRUE(hasDiag(ib, "nic.retry_count", 6, "<= 7"));
  EXPECT_TRUE(hasDiag(diagnosticsOf(kIb + "nic: {retry_count: -1}\n"), "nic.retry_count", 4, ">= 0"));
}

}  // namespace
}  // namespace fabricsim
