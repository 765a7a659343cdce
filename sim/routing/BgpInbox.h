// BgpInbox: the BGP messages on the wire toward, and queued at, every switch of a control plane.
//
// Models: each BGP session delivers its messages in order (one TCP stream), after the link's
// propagation latency; a switch takes the messages of all its sessions one at a time in arrival
// order, ties in send order, then in the switch's session order. A message is stored once
// however many sessions carry it (a switch announces a best-path change on every session at
// once): a record {sent, prefix, AS_PATH, cause} with a reference count.
// Layout: the sessions of a switch that have the same latency share one queue (a lane) of
// (record id, session) items in blocks of a shared pool. Messages are posted in send order (a
// record is posted to all its sessions before the next is created), so a lane in post order is
// already in arrival order; only copies of one record on parallel sessions are put in session
// order as they are posted. Taking the next message is O(1) for a switch whose links all have
// one latency (a Clos fabric), O(lanes) otherwise: no per-message heap. Dropping the messages
// of one session (teardown, loss on a failed link) filters its lane.
// Leaves out: message encoding, TCP (no loss on a live session), receive-buffer limits.
// Units: Time in ps; counts are messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
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
  /// `slotLatency[s]` the propagation latency into session slot s. At most 65,535 sessions per node.
  BgpInbox(std::vector<size_t> slotBase, std::vector<Time> slotLatency);

  /// A new message record (not yet on any session).
  uint32_t create(Time sent, uint32_t leafPos, AsPathTable::Ref path, uint32_t cause);
  /// Puts message `id` on session `local` of switch `r` (arrival: sent + latency). Messages are
  /// posted in send order: `id` is the newest record or the one posted last.
  void post(NodeId r, uint32_t local, uint32_t id);
  /// Frees a record that no session took.
  void discardIfUnused(uint32_t id) {
    if (msgs_[id].refs == 0) freeMsgs_.push_back(id);
  }

  bool empty(NodeId r) const { return next_[r] == kNil; }
  /// Arrival time of the next message of switch `r` (precondition: !empty(r)).
  Time nextArrival(NodeId r) const { return lanes_[next_[r]].arrival; }
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
  static constexpr uint32_t kPerBlock = 10;
  struct alignas(64) Block {  // one cache line
    uint32_t next;
    uint32_t id[kPerBlock];
    uint16_t local[kPerBlock];
  };
  struct Lane {
    Time latency;
    uint32_t head = kNil;
    uint32_t tail = kNil;
    uint16_t headOff = 0;
    uint16_t tailEnd = 0;
    // The head item's order key (valid while the lane is not empty).
    Time arrival;
    uint32_t seq = 0;
    uint32_t local = 0;
    uint32_t lastId = kNil;  // the item posted last
    uint32_t lastLocal = 0;
  };
  /// Order of two non-empty lanes' heads: true when a's comes after b's.
  static bool later(const Lane& a, const Lane& b) {
    if (a.arrival != b.arrival) return a.arrival > b.arrival;
    if (a.seq != b.seq) return static_cast<int32_t>(a.seq - b.seq) > 0;
    return a.local > b.local;
  }
  void push(Lane& ln, uint32_t id, uint32_t local);
  void popFront(Lane& ln);
  void setHeadKey(Lane& ln);
  /// Recomputes next_[r], the lane of r holding its next message.
  void pickNext(NodeId r);
  /// Removes the items of session `local` of `r` for which drop(id) is true, in lane order.
  template <class Pred>
  void filter(NodeId r, uint32_t local, Pred drop, const std::function<void(uint32_t)>& onDrop);
  uint32_t allocBlock();

  std::vector<size_t> slotBase_;
  std::vector<uint32_t> laneOf_;    // per session slot: its lane
  std::vector<uint32_t> laneBase_;  // per node (+1): first lane
  std::vector<Lane> lanes_;
  std::vector<uint32_t> next_;                // per node: lane of the next message, kNil when none
  static constexpr uint32_t kChunkBits = 12;  // 4,096 blocks (256 KiB) per chunk
  static constexpr uint32_t kChunkBlocks = 1u << kChunkBits;
  Block& block(uint32_t b) { return chunks_[b >> kChunkBits][b & (kChunkBlocks - 1)]; }
  const Block& block(uint32_t b) const { return chunks_[b >> kChunkBits][b & (kChunkBlocks - 1)]; }
  std::vector<std::unique_ptr<Block[]>> chunks_;
  uint32_t blockCount_ = 0;
  std::vector<uint32_t> freeBlocks_;
  std::vector<Message> msgs_;
  std::vector<uint32_t> freeMsgs_;
  std::vector<Item> scratch_;  // filter
  uint32_t nextSeq_ = 0;
  size_t queued_ = 0;
  size_t peakQueued_ = 0;
};

}  // namespace fabricsim
