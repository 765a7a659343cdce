// BgpInbox: the BGP messages on the wire toward, and queued at, every switch of a control plane.
//
// Models: each BGP session delivers its messages in order (one TCP stream), after the link's
// propagation latency; a switch takes the messages of all its sessions one at a time in arrival
// order, ties in send order. A message is stored once however many sessions carry it (a switch
// announces a best-path change on every session at once): a record {sent, prefix, AS_PATH,
// cause} with a reference count, and each session queue holds 4-byte record ids in blocks of a
// shared pool. Arrival = sent + the session's latency, so nothing per copy but the id.
// A switch keeps a small heap of its sessions' queue heads keyed by (arrival, send order).
// Leaves out: message encoding, TCP (no loss on a live session), receive-buffer limits.
// Units: Time in ps; counts are messages.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/Time.h"
#include "sim/routing/AsPathTable.h"
#include "sim/topology/Topology.h"

namespace fabricsim {

class BgpInbox {
 public:
  struct Message {
    Time sent;
    uint32_t seq;           ///< send order (wraps; compared modulo 2^32)
    uint32_t leafPos;       ///< prefix: index of its leaf among its plane's leaves
    AsPathTable::Ref path;  ///< kNone: a withdrawal
    uint32_t cause;         ///< the event the message belongs to
    uint32_t refs;          ///< session queues holding it
  };
  struct Item {
    uint32_t local;  ///< session index at the receiving switch
    uint32_t id;     ///< message record
  };

  /// `slotBase[n]` is the first session slot of node n (size nodes + 1, non-decreasing);
  /// `slotLatency[s]` the propagation latency into session slot s.
  BgpInbox(std::vector<size_t> slotBase, std::vector<Time> slotLatency);

  /// A new message record (not yet on any session).
  uint32_t create(Time sent, uint32_t leafPos, AsPathTable::Ref path, uint32_t cause);
  /// Puts message `id` on session `local` of switch `r` (arrival: sent + latency).
  void post(NodeId r, uint32_t local, uint32_t id);
  /// Frees a record that no session took.
  void discardIfUnused(uint32_t id) {
    if (msgs_[id].refs == 0) freeMsgs_.push_back(id);
  }

  bool empty(NodeId r) const { return heads_[r].empty(); }
  /// Arrival time of the next message of switch `r` (precondition: !empty(r)).
  Time nextArrival(NodeId r) const { return heads_[r].front().arrival; }
  /// Takes the next message of `r`; read it with message(), then release() it.
  Item pop(NodeId r);
  const Message& message(uint32_t id) const { return msgs_[id]; }
  void release(uint32_t id) {
    if (--msgs_[id].refs == 0) freeMsgs_.push_back(id);
  }
  /// Drops every message of session `local` of `r` (onDrop(id) before each is released).
  void clear(NodeId r, uint32_t local, const std::function<void(uint32_t)>& onDrop);
  /// Drops the messages of session `local` of `r` that arrive at or after `t` (still on the wire).
  void dropArrivingFrom(NodeId r, uint32_t local, Time t, const std::function<void(uint32_t)>& onDrop);

  size_t queued() const { return queued_; }
  size_t peakQueued() const { return peakQueued_; }
  size_t memoryBytes() const;

 private:
  static constexpr uint32_t kNil = 0xffffffffu;
  static constexpr uint32_t kPerBlock = 15;
  struct Block {
    uint32_t next;
    uint32_t item[kPerBlock];
  };
  struct Fifo {
    uint32_t head = kNil;
    uint32_t tail = kNil;
    uint16_t headOff = 0;
    uint16_t tailEnd = 0;
  };
  struct Head {
    Time arrival;
    uint32_t seq;
    uint32_t local;
  };
  /// Heap order: a after b (std heaps keep the largest first, so "greater" puts the earliest on top).
  static bool later(const Head& a, const Head& b) {
    if (a.arrival != b.arrival) return a.arrival > b.arrival;
    if (a.seq != b.seq) return static_cast<int32_t>(a.seq - b.seq) > 0;
    return a.local > b.local;
  }
  Time arrivalOf(size_t slot, uint32_t id) const { return msgs_[id].sent + latency_[slot]; }
  void pushHead(NodeId r, uint32_t local, uint32_t id);
  void removeHead(NodeId r, uint32_t local);
  void fifoPush(Fifo& f, uint32_t id);
  uint32_t fifoFront(const Fifo& f) const { return blocks_[f.head].item[f.headOff]; }
  void fifoPop(Fifo& f);
  uint32_t allocBlock();

  std::vector<size_t> slotBase_;
  std::vector<Time> latency_;
  std::vector<Fifo> fifo_;                // per session slot
  std::vector<std::vector<Head>> heads_;  // per node: heads of its non-empty session queues
  std::vector<Block> blocks_;
  std::vector<uint32_t> freeBlocks_;
  std::vector<Message> msgs_;
  std::vector<uint32_t> freeMsgs_;
  uint32_t nextSeq_ = 0;
  size_t queued_ = 0;
  size_t peakQueued_ = 0;
};

}  // namespace fabricsim
