#include "sim/routing/BgpInbox.h"

#include <utility>

#include "sim/core/Error.h"

namespace fabricsim {

BgpInbox::BgpInbox(std::vector<size_t> slotBase, std::vector<Time> slotLatency)
    : slotBase_(std::move(slotBase)), latency_(std::move(slotLatency)) {
  SIM_CHECK(!slotBase_.empty() && slotBase_.back() == latency_.size(), "BgpInbox: slot table mismatch");
  fifo_.resize(latency_.size());
  heads_.resize(slotBase_.size() - 1);
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
  blocks_.emplace_back();
  return static_cast<uint32_t>(blocks_.size() - 1);
}

void BgpInbox::fifoPush(Fifo& f, uint32_t id) {
  if (f.head == kNil) {
    f.head = f.tail = allocBlock();
    f.headOff = f.tailEnd = 0;
  } else if (f.tailEnd == kPerBlock) {
    const uint32_t b = allocBlock();
    blocks_[f.tail].next = b;
    f.tail = b;
    f.tailEnd = 0;
  }
  blocks_[f.tail].item[f.tailEnd++] = id;
}

void BgpInbox::fifoPop(Fifo& f) {
  ++f.headOff;
  if (f.head == f.tail && f.headOff == f.tailEnd) {
    freeBlocks_.push_back(f.head);
    f.head = f.tail = kNil;
  } else if (f.headOff == kPerBlock) {
    const uint32_t next = blocks_[f.head].next;
    freeBlocks_.push_back(f.head);
    f.head = next;
    f.headOff = 0;
  }
}

void BgpInbox::pushHead(NodeId r, uint32_t local, uint32_t id) {
  auto& h = heads_[r];
  h.push_back(Head{arrivalOf(slotBase_[r] + local, id), msgs_[id].seq, local});
  std::push_heap(h.begin(), h.end(), later);
}

void BgpInbox::removeHead(NodeId r, uint32_t local) {
  auto& h = heads_[r];
  const auto it = std::find_if(h.begin(), h.end(), [&](const Head& x) { return x.local == local; });
  if (it == h.end()) return;
  *it = h.back();
  h.pop_back();
  std::make_heap(h.begin(), h.end(), later);
}

void BgpInbox::post(NodeId r, uint32_t local, uint32_t id) {
  Fifo& f = fifo_[slotBase_[r] + local];
  const bool wasEmpty = f.head == kNil;
  fifoPush(f, id);
  ++msgs_[id].refs;
  if (wasEmpty) pushHead(r, local, id);
  peakQueued_ = std::max(peakQueued_, ++queued_);
}

BgpInbox::Item BgpInbox::pop(NodeId r) {
  auto& h = heads_[r];
  SIM_DCHECK(!h.empty(), "BgpInbox::pop on an empty inbox");
  std::pop_heap(h.begin(), h.end(), later);
  const uint32_t local = h.back().local;
  h.pop_back();
  Fifo& f = fifo_[slotBase_[r] + local];
  const uint32_t id = fifoFront(f);
  fifoPop(f);
  if (f.head != kNil) pushHead(r, local, fifoFront(f));
  --queued_;
  return Item{local, id};
}

void BgpInbox::clear(NodeId r, uint32_t local, const std::function<void(uint32_t)>& onDrop) {
  Fifo& f = fifo_[slotBase_[r] + local];
  if (f.head == kNil) return;
  removeHead(r, local);
  while (f.head != kNil) {
    const uint32_t id = fifoFront(f);
    fifoPop(f);
    --queued_;
    onDrop(id);
    release(id);
  }
}

void BgpInbox::dropArrivingFrom(NodeId r, uint32_t local, Time t,
                                const std::function<void(uint32_t)>& onDrop) {
  const size_t slot = slotBase_[r] + local;
  Fifo& f = fifo_[slot];
  if (f.head == kNil) return;
  removeHead(r, local);
  std::vector<uint32_t> kept;
  while (f.head != kNil) {
    const uint32_t id = fifoFront(f);
    fifoPop(f);
    if (arrivalOf(slot, id) < t) {
      kept.push_back(id);
    } else {
      --queued_;
      onDrop(id);
      release(id);
    }
  }
  for (const uint32_t id : kept) fifoPush(f, id);
  if (!kept.empty()) pushHead(r, local, kept.front());
}

size_t BgpInbox::memoryBytes() const {
  size_t heads = heads_.capacity() * sizeof(std::vector<Head>);
  for (const auto& h : heads_) heads += h.capacity() * sizeof(Head);
  return slotBase_.capacity() * sizeof(size_t) + latency_.capacity() * sizeof(Time) +
         fifo_.capacity() * sizeof(Fifo) + heads + blocks_.capacity() * sizeof(Block) +
         freeBlocks_.capacity() * sizeof(uint32_t) + msgs_.capacity() * sizeof(Message) +
         freeMsgs_.capacity() * sizeof(uint32_t);
}

}  // namespace fabricsim
