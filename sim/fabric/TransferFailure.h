// TransferFailure: a connection that gave up, and what the results say about it.
//
// Models: the error a NIC reports when a reliable connection (RC queue pair) cannot deliver:
// its retransmission timer expired once more after the last allowed retry without any
// acknowledged progress (IBV_WC_RETRY_EXC_ERR, "transport retry counter exceeded"), or the run
// stalled with data outstanding and no timer left to recover it (an infinite local ACK timeout).
// The packet backend's watchdog also ends a run that cannot finish: no data delivered for a
// while with packets in the fabric (no_progress), or a cycle of PFC-paused ports (pfc_deadlock);
// such a failure names ports, not a connection, and fails every transfer still outstanding.
// A connection that gives up while one of its NICs is down, or the NIC's host link is, with no
// failover to another NIC of the host (nic.failover off, or no other NIC up that reaches the
// peer), fails as `nic_down` instead of `retry_exceeded`.
// Every transfer posted on the connection and not yet delivered fails with it.
// Leaves out: recovery (the application, e.g. NCCL, aborts: the run ends).
// Units: Time (ps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/Time.h"

namespace fabricsim {

struct TransferFailure {
  enum class Kind { RetryExceeded, Stalled, NoProgress, PfcDeadlock, NicDown };
  Kind kind = Kind::RetryExceeded;
  Time at;                  ///< when the connection failed (or the run stalled)
  std::string source;       ///< sending node (host name; "host-3 nic 1" with several NICs)
  std::string destination;  ///< receiving node
  uint32_t srcNic = 0;      ///< global NIC indices
  uint32_t dstNic = 0;
  uint8_t trafficClass = 0;
  uint16_t qpIndex = 0;           ///< queue pair index between the two NICs
  int retries = 0;                ///< retransmissions after timeouts without progress before it failed
  uint64_t transfers = 0;         ///< transfers of the connection not delivered (now failed)
  std::vector<uint32_t> srcGpus;  ///< the failed transfers' source GPUs (global ranks, sorted, unique)
  std::vector<uint32_t> dstGpus;  ///< and their destination GPUs
  std::string message;            ///< one line for people: who, when, why
  static const char* kindName(Kind k) {
    switch (k) {
      case Kind::RetryExceeded:
        return "retry_exceeded";
      case Kind::Stalled:
        return "stalled";
      case Kind::NoProgress:
        return "no_progress";
      case Kind::PfcDeadlock:
        return "pfc_deadlock";
      case Kind::NicDown:
        return "nic_down";
    }
    return "unknown";
  }
};

}  // namespace fabricsim
