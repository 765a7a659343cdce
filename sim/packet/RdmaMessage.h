// RdmaMessage: one transfer posted on a queue pair, as the sender and receiver track it.
//
// Models: a message segmented into PSNs [firstPsn, lastPsn], every packet a full MTU except the
// last (lastPayload bytes). Kept in a singly linked list per QP until fully acknowledged.
// Units: bytes.
#pragma once

#include <cstdint>

namespace fabricsim {

class TransferObserver;

struct RdmaMessage {
  uint32_t firstPsn = 0;
  uint32_t lastPsn = 0;
  uint32_t lastPayload = 0;
  uint32_t next = 0xFFFFFFFFu;  ///< next message on the same QP
  uint32_t record = 0;          ///< its transfer's slot in the TransferTable; kNoRecord once delivered
  static constexpr uint32_t kNoRecord = 0xFFFFFFFFu;
  uint64_t tag = 0;
  TransferObserver* observer = nullptr;
};

}  // namespace fabricsim
