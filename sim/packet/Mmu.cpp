#include "sim/packet/Mmu.h"

#include <algorithm>

namespace fabricsim {

bool Mmu::init(const Config* config, const std::vector<uint64_t>& headroom) {
  config_ = config;
  lossyAlpha_ = config->lossyAlpha;
  const size_t ports = headroom.size();
  const uint8_t tracked = config->credited ? 0xFF : config->losslessMask;
  pgsPerPort_ = 0;
  for (int tc = 0; tc < kTrafficClasses; ++tc)
    slot_[tc] = ((tracked >> tc) & 1) ? static_cast<int8_t>(pgsPerPort_++) : int8_t{-1};
  pgs_.assign(ports * pgsPerPort_, Pg{});
  headroom_ = headroom;
  peakHeadroom_.assign(ports, 0);
  ports_.assign(ports, PortAcct{});
  peakCredited_.assign(ports, 0);
  const uint64_t lossless = static_cast<uint64_t>(__builtin_popcount(config->losslessMask));
  carved_ = 0;
  for (uint64_t h : headroom) carved_ += lossless * h + config->reserve;
  sharedSize_ = carved_ < config->buffer ? config->buffer - carved_ : 0;
  sharedUsed_ = 0;
  used_ = 0;
  return carved_ < config->buffer;
}

uint64_t Mmu::xoffThreshold() const {
  if (config_->dynamicAlpha > 0)
    return static_cast<uint64_t>(config_->dynamicAlpha * static_cast<double>(sharedSize_ - sharedUsed_));
  return config_->xoff;
}

uint64_t Mmu::xonThreshold() const {
  if (config_->dynamicAlpha > 0) {
    const uint64_t off = xoffThreshold();
    return off > config_->xonDelta ? off - config_->xonDelta : 0;
  }
  return config_->xon;
}

uint32_t Mmu::takeReserve(uint32_t port, Pg& g, uint32_t bytes) {
  const uint64_t used = ports_[port].reserveUsed;
  const uint64_t room = config_->reserve > used ? config_->reserve - used : 0;
  const uint32_t in = static_cast<uint32_t>(std::min<uint64_t>(room, bytes));
  g.reserveUsed += in;
  ports_[port].reserveUsed += in;
  return bytes - in;
}

Mmu::Verdict Mmu::admitLossless(uint32_t port, uint8_t tc, uint32_t bytes, bool& xoff) {
  xoff = false;
  Pg& g = pg(port, tc);
  const uint32_t rest = takeReserve(port, g, bytes);
  if (rest > 0) {
    const uint64_t threshold = xoffThreshold();
    if (g.sharedUsed + rest <= threshold && sharedUsed_ + rest <= sharedSize_) {
      g.sharedUsed += rest;
      sharedUsed_ += rest;
    } else if (g.headroomUsed + rest <= headroom_[port]) {
      g.headroomUsed += rest;
      if (g.headroomUsed > peakHeadroom_[port]) peakHeadroom_[port] = g.headroomUsed;
    } else {
      giveReserve(port, g, bytes - rest);  // undo: the packet is not admitted
      return Verdict::Dropped;
    }
  }
  used_ += bytes;
  if (!g.paused && (g.headroomUsed > 0 || (g.sharedUsed > 0 && g.sharedUsed >= xoffThreshold()))) {
    g.paused = true;
    xoff = true;
  }
  return Verdict::Admitted;
}

void Mmu::releaseLossless(uint32_t port, uint8_t tc, uint32_t bytes, bool& xon) {
  xon = false;
  Pg& g = pg(port, tc);
  uint32_t left = bytes;
  const uint32_t fromHeadroom = std::min(g.headroomUsed, left);
  g.headroomUsed -= fromHeadroom;
  left -= fromHeadroom;
  const uint64_t fromShared = std::min<uint64_t>(g.sharedUsed, left);
  g.sharedUsed -= fromShared;
  sharedUsed_ -= fromShared;
  left -= static_cast<uint32_t>(fromShared);
  giveReserve(port, g, left);
  used_ -= bytes;
  if (g.paused && g.headroomUsed == 0 && (g.sharedUsed == 0 || g.sharedUsed <= xonThreshold())) {
    g.paused = false;
    xon = true;
  }
}

}  // namespace fabricsim
