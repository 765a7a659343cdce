#include "sim/routing/BgpInbox.h"

#include <algorithm>
#include <utility>

#include "sim/core/Error.h"

namespace fabricsim {

BgpInbox::BgpInbox(std::vector<size_t> slotBase, std::vector<Time> slotLatency)
    : slotBase_(std::move(slotBase)) {
  SIM_CHECK(!slotBase_.empty() && slotBase_.back() == slotLatency.size(), "BgpInbox: slot table mismatch");
  const size_t nodes = slotBase_.size() - 1;
  laneOf_.assign(slotLatency.size(), kNil);
  laneBase_.assign(nodes + 1, 0);
  next_.assign(nodes, kNil);
  for (size_t n = 0; n < nodes; ++n) {
    laneBase_[n] = static_cast<uint32_t>(lanes_.size());
    SIM_CHECK(slotBase_[n + 1] - slotBase_[n] <= 0xffff, "BgpInbox: more than 65,535 sessions at one switch");
    for (size_t s = slotBase_[n]; s < slotBase_[n + 1]; ++s) {
      uint32_t lane = laneBase_[n];
      while (lane < lanes_.size() && lanes_[lane].latency != slotLatency[s]) ++lane;
      if (lane == lanes_.size()) {
        lanes_.emplace_back();
        lanes_.back().latency = slotLatency[s];
      }
      laneOf_[s] = lane;
    }
  }
  laneBase_[nodes] = static_cast<uint32_t>(lanes_.size());
}

uint32_t BgpInbox::create(Time sent, uint32_t leafPos, AsPathTable::Ref path, uint32_t cause) {
  uint32_t id;
  if (!freeMsgs_.empty()) {
    id = freeMsgs_.back();
    freeMsgs_.pop_back();
  } else {
    id = static_cast<uint32_t>(msgs_.size());
    msgs_.emplace_back();
  }
  msgs_[id] = Message{sent, nextSeq_++, leafPos, path, cause, 0};
  return id;
}

uint32_t BgpInbox::allocBlock() {
  if (!freeBlocks_.empty()) {
    const uint32_t b = freeBlocks_.back();
    freeBlocks_.pop_back();
    return b;
  }
  // Fixed-size chunks: the pool grows without copying and without doubling its footprint.
  if (blockCount_ % kChunkBlocks == 0) chunks_.push_back(std::make_unique<Block[]>(kChunkBlocks));
  return blockCount_++;
}

void BgpInbox::push(Lane& ln, uint32_t id, uint32_t local) {
  if (ln.head == kNil) {
    ln.head = ln.tail = allocBlock();
    ln.headOff = ln.tailEnd = 0;
  } else if (ln.tailEnd == kPerBlock) {
    const uint32_t b = allocBlock();
    block(ln.tail).next = b;
    ln.tail = b;
    ln.tailEnd = 0;
  }
  Block& b = block(ln.tail);
  b.id[ln.tailEnd] = id;
  b.local[ln.tailEnd] = static_cast<uint16_t>(local);
  ++ln.tailEnd;
  ln.lastId = id;
  ln.lastLocal = local;
}

void BgpInbox::popFront(Lane& ln) {
  ++ln.headOff;
  if (ln.head == ln.tail && ln.headOff == ln.tailEnd) {
    freeBlocks_.push_back(ln.head);
    ln.head = ln.tail = kNil;
    ln.lastId = kNil;
  } else if (ln.headOff == kPerBlock) {
    const uint32_t next = block(ln.head).next;
    freeBlocks_.push_back(ln.head);
    ln.head = next;
    ln.headOff = 0;
  }
}

void BgpInbox::setHeadKey(Lane& ln) {
  const Block& b = block(ln.head);
  const Message& m = msgs_[b.id[ln.headOff]];
  ln.arrival = m.sent + ln.latency;
  ln.seq = m.seq;
  ln.local = b.local[ln.headOff];
}

void BgpInbox::pickNext(NodeId r) {
  uint32_t best = kNil;
  for (uint32_t l = laneBase_[r]; l < laneBase_[r + 1]; ++l)
    if (lanes_[l].head != kNil && (best == kNil || later(lanes_[best], lanes_[l]))) best = l;
  next_[r] = best;
}

void BgpInbox::post(NodeId r, uint32_t local, uint32_t id) {
  const uint32_t l = laneOf_[slotBase_[r] + local];
  Lane& ln = lanes_[l];
  ++msgs_[id].refs;
  peakQueued_ = std::max(peakQueued_, ++queued_);
  if (ln.head != kNil && ln.lastId == id && ln.lastLocal > local) {
    // The same record on parallel sessions, posted out of session order: put it in place
    // among the copies at the tail (rare: only where port orders differ at the two ends).
    scratch_.clear();
    while (ln.head != kNil) {
      const Block& b = block(ln.head);
      scratch_.push_back(Item{b.local[ln.headOff], b.id[ln.headOff]});
      popFront(ln);
    }
    size_t at = scratch_.size();
    while (at > 0 && scratch_[at - 1].id == id && scratch_[at - 1].local > local) --at;
    scratch_.insert(scratch_.begin() + static_cast<std::ptrdiff_t>(at), Item{local, id});
    for (const Item& it : scratch_) push(ln, it.id, it.local);
    setHeadKey(ln);
    pickNext(r);
    return;
  }
  SIM_DCHECK(ln.head == kNil || (msgs_[ln.lastId].sent <= msgs_[id].sent &&
                                 static_cast<int32_t>(msgs_[id].seq - msgs_[ln.lastId].seq) >= 0),
             "BgpInbox::post: messages must be posted in send order");
  const bool wasEmpty = ln.head == kNil;
  push(ln, id, local);
  if (!wasEmpty) return;  // the lane's head and so the switch's next message are unchanged
  setHeadKey(ln);
  if (next_[r] == kNil || later(lanes_[next_[r]], ln)) next_[r] = l;
}

BgpInbox::Item BgpInbox::pop(NodeId r) {
  SIM_DCHECK(next_[r] != kNil, "BgpInbox::pop on an empty inbox");
  Lane& ln = lanes_[next_[r]];
  const Block& b = block(ln.head);
  const Item it{b.local[ln.headOff], b.id[ln.headOff]};
  popFront(ln);
  if (ln.head != kNil) setHeadKey(ln);
  if (laneBase_[r + 1] - laneBase_[r] == 1)
    next_[r] = ln.head != kNil ? laneBase_[r] : kNil;
  else
    pickNext(r);
  --queued_;
  return it;
}

template <class Pred>
void BgpInbox::filter(NodeId r, uint32_t local, Pred drop, const std::function<void(uint32_t)>& onDrop) {
  Lane& ln = lanes_[laneOf_[slotBase_[r] + local]];
  if (ln.head == kNil) return;
  scratch_.clear();
  while (ln.head != kNil) {
    const Block& b = block(ln.head);
    scratch_.push_back(Item{b.local[ln.headOff], b.id[ln.headOff]});
    popFront(ln);
  }
  for (const Item& it : scratch_) {
    if (it.local == local && drop(it.id)) {
      --queued_;
      onDrop(it.id);
      release(it.id);
    } else {
      push(ln, it.id, it.local);
    }
  }
  if (ln.head != kNil) setHeadKey(ln);
  pickNext(r);
}

void BgpInbox::clear(NodeId r, uint32_t local, const std::function<void(uint32_t)>& onDrop) {
  filter(
      r, local, [](uint32_t) { return true; }, onDrop);
}

void BgpInbox::dropArrivingFrom(NodeId r, uint32_t local, Time t,
                                const std::function<void(uint32_t)>& onDrop) {
  const Time latency = lanes_[laneOf_[slotBase_[r] + local]].latency;
  filter(
      r, local, [&](uint32_t id) { return msgs_[id].sent + latency >= t; }, onDrop);
}

size_t BgpInbox::memoryBytes() const {
  return slotBase_.capacity() * sizeof(size_t) + laneOf_.capacity() * sizeof(uint32_t) +
         laneBase_.capacity() * sizeof(uint32_t) + lanes_.capacity() * sizeof(Lane) +
         next_.capacity() * sizeof(uint32_t) + chunks_.capacity() * sizeof(chunks_[0]) +
         chunks_.size() * kChunkBlocks * sizeof(Block) + freeBlocks_.capacity() * sizeof(uint32_t) +
         msgs_.capacity() * sizeof(Message) + freeMsgs_.capacity() * sizeof(uint32_t) +
         scratch_.capacity() * sizeof(Item);
}

}  // namespace fabricsim
