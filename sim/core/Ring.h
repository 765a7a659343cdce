// Ring: a growable ring buffer (FIFO) of small records, allocated on first use, doubling on
// demand from kFirstCapacity entries (a power of two), and given back by releaseIfEmpty().
//
// Models: nothing physical; the FIFO under a packet port's queues and wire (sim/packet/PacketRing)
// and under the event queue's delay lanes (DelayLaneQueue), which differ only in where they start.
#pragma once

#include <cstdint>
#include <memory>

namespace fabricsim {

template <typename T, uint32_t kFirstCapacity = 4>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  const T& front() const { return buf_[head_]; }
  void push(const T& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }
  /// Applies `f` to every entry, oldest first.
  template <typename F>
  void forEach(F f) const {
    for (uint32_t i = 0; i < size_; ++i) f(buf_[(head_ + i) & (cap_ - 1)]);
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }
  /// Gives the buffer back when the ring is empty (it grows again on the next push).
  void releaseIfEmpty() {
    if (size_ != 0) return;
    buf_.reset();
    cap_ = 0;
    head_ = 0;
  }
  T pop() {
    const T v = buf_[head_];
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    return v;
  }

 private:
  void grow() {
    const uint32_t cap = cap_ ? cap_ * 2 : kFirstCapacity;
    std::unique_ptr<T[]> b(new T[cap]);
    for (uint32_t i = 0; i < size_; ++i) b[i] = buf_[(head_ + i) & (cap_ - 1)];
    buf_ = std::move(b);
    cap_ = cap;
    head_ = 0;
  }
  std::unique_ptr<T[]> buf_;
  uint32_t cap_ = 0;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace fabricsim
