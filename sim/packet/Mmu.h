// Mmu: the shared-buffer memory management unit of one switch (Broadcom Trident/Tomahawk style,
// and the switch MMU of the HPCC ns-3 reference): how its packet buffer is divided and when a
// priority group must send PFC XOFF / XON upstream.
//
// Models, for every (ingress port, lossless traffic class) — one priority group (PG) per class:
// - the buffer is carved, before anything is shared, into
//     * a minimum reserve per ingress port (`switch.reserve`), so no port can be starved of
//       buffer by the others;
//     * a headroom per (ingress port, lossless class) (see PfcHeadroom for its size), which
//       only absorbs what keeps arriving after XOFF;
//     * the shared pool: everything else.
// - A lossless packet fills its port's reserve, then the shared pool while the PG's shared
//   occupancy stays at or below the XOFF threshold (and the pool has room), else the PG's
//   headroom. The threshold is static (`pfc.xoff`) or dynamic: alpha x (shared pool - shared
//   bytes in use), as Broadcom's dynamic thresholds and ns-3's `(buffer - headroom - reserve -
//   shared used) >> shift`. XOFF is due as soon as the PG holds headroom bytes or its shared
//   occupancy reaches the threshold; XON when its headroom is empty and its shared occupancy is
//   at or below XON (static `pfc.xon`, or dynamic threshold - `pfc.xon_delta`).
//   A lossless packet that finds its headroom full is dropped: with the headroom of PfcHeadroom
//   that cannot happen, so such a drop is an invariant violation the caller reports.
// - A lossy packet goes to the shared pool if its egress class queue stays within dtAlpha x the
//   free shared pool (Choudhury-Hahne dynamic threshold); when that refuses, to its port's
//   reserve if there is room; else it is dropped. (Charged to the shared pool first, a lossy
//   packet costs no per-port bookkeeping while the pool has room: the common case.)
// - Lossless departures free headroom first, then shared, then reserve (the order of the MMU
//   counters); a lossy departure frees what it was charged to.
// - InfiniBand: credit-accounted bytes per (input port, virtual lane); the link's credits bound
//   them (the advertised per-VL buffer), so there is no admission decision here. The peak per
//   input port is kept, so that the bound can be checked.
// Leaves out: egress-side (per queue) reserves and limits for lossless classes, cell
// granularity (bytes are exact), priority-to-PG mappings other than one PG per class, a shared
// headroom pool.
// Units: bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/packet/Packet.h"

namespace fabricsim {

class Mmu {
 public:
  struct Config {
    uint64_t buffer = 0;       ///< total packet buffer of the switch
    uint64_t reserve = 0;      ///< minimum guarantee per ingress port
    uint8_t losslessMask = 0;  ///< classes with PFC (0 with PFC off)
    bool credited = false;     ///< InfiniBand: every virtual lane's bytes are credit-accounted
    double dynamicAlpha = 0;   ///< > 0: dynamic XOFF = alpha x free shared pool
    uint64_t xoff = 0;         ///< static XOFF: shared bytes of one PG
    uint64_t xon = 0;          ///< static XON
    uint64_t xonDelta = 0;     ///< dynamic XON = XOFF - xonDelta
    double lossyAlpha = 1.0;   ///< lossy egress dynamic threshold
  };

  /// Lays the buffer out for a switch with `headroom.size()` ports, `headroom[p]` being the
  /// headroom of each lossless class of port p. Returns false (and leaves the MMU unusable)
  /// when the reserves and headroom do not fit in the buffer; carved() says how much they need.
  bool init(const Config* config, const std::vector<uint64_t>& headroom);
  /// Bytes the reserves and headroom of this switch take out of the buffer.
  uint64_t carved() const { return carved_; }
  uint64_t sharedPool() const { return sharedSize_; }

  enum class Verdict : uint8_t { Admitted, Dropped };
  /// A lossless packet of `bytes` arrives on (port, tc). `xoff` is set when the PG must now
  /// send XOFF (it was not paused and has crossed the threshold).
  Verdict admitLossless(uint32_t port, uint8_t tc, uint32_t bytes, bool& xoff);
  /// A lossless packet leaves. `xon` is set when the paused PG may now send XON.
  void releaseLossless(uint32_t port, uint8_t tc, uint32_t bytes, bool& xon);
  /// Where a lossy packet was charged, or that it was dropped.
  enum class LossyCharge : uint8_t { Dropped, Shared, Reserve };
  /// A lossy packet of `bytes` arrives on `port` for an egress class queue now holding
  /// `egressQueue` bytes: the shared pool takes it within the dynamic threshold; when that
  /// refuses, the port's reserve takes it if it has room (so a port starved of shared buffer by
  /// the others still makes progress). The caller keeps the charge for the release.
  LossyCharge admitLossy(uint32_t port, uint32_t bytes, uint64_t egressQueue) {
    const uint64_t freeShared = sharedSize_ - sharedUsed_;
    const auto threshold = static_cast<uint64_t>(lossyAlpha_ * static_cast<double>(freeShared));
    if (bytes <= freeShared && egressQueue + bytes <= threshold) {
      sharedUsed_ += bytes;
      used_ += bytes;
      return LossyCharge::Shared;
    }
    PortAcct& a = ports_[port];
    if (a.reserveUsed + static_cast<uint64_t>(bytes) > config_->reserve) return LossyCharge::Dropped;
    a.reserveUsed += bytes;
    used_ += bytes;
    return LossyCharge::Reserve;
  }
  void releaseLossy(uint32_t port, uint32_t bytes, bool fromReserve) {
    if (fromReserve)
      ports_[port].reserveUsed -= bytes;
    else
      sharedUsed_ -= bytes;
    used_ -= bytes;
  }
  /// InfiniBand: bytes held for (input port, VL), bounded by the link's credits.
  void addCredited(uint32_t port, uint8_t vl, uint32_t bytes) {
    Pg& g = pg(port, vl);
    g.sharedUsed += bytes;
    used_ += bytes;
    if (g.sharedUsed > peakCredited_[port]) peakCredited_[port] = g.sharedUsed;
  }
  void releaseCredited(uint32_t port, uint8_t vl, uint32_t bytes) {
    pg(port, vl).sharedUsed -= bytes;
    used_ -= bytes;
  }
  uint64_t credited(uint32_t port, uint8_t vl) const { return slot_[vl] < 0 ? 0 : pg(port, vl).sharedUsed; }
  /// InfiniBand: the most bytes any one VL of `port` held at once (the credit loop bounds it by
  /// the credit advertised to the upstream port).
  uint64_t peakCredited(uint32_t port) const { return peakCredited_[port]; }

  /// Whether (port, tc) has XOFF in force upstream.
  bool paused(uint32_t port, uint8_t tc) const { return slot_[tc] >= 0 && pg(port, tc).paused; }
  /// Clears the paused state of (port, tc) without an XON (the link went down).
  void forgetPause(uint32_t port, uint8_t tc) {
    if (slot_[tc] >= 0) pg(port, tc).paused = false;
  }
  /// The current XOFF threshold (shared bytes of one PG).
  uint64_t xoffThreshold() const;
  uint64_t headroomOf(uint32_t port) const { return headroom_[port]; }
  /// Most headroom bytes any lossless class of `port` held at once.
  uint64_t peakHeadroom(uint32_t port) const { return peakHeadroom_[port]; }
  /// Bytes held: all classes, all ports.
  uint64_t used() const { return used_; }
  uint64_t sharedUsed() const { return sharedUsed_; }
  /// Bytes held for (port, tc): reserve + shared + headroom.
  uint64_t held(uint32_t port, uint8_t tc) const {
    if (slot_[tc] < 0) return 0;  // a lossy class: its bytes are not kept per port
    const Pg& g = pg(port, tc);
    return g.reserveUsed + g.sharedUsed + g.headroomUsed;
  }

 private:
  struct Pg {
    uint32_t reserveUsed = 0;
    uint32_t headroomUsed = 0;
    uint64_t sharedUsed = 0;
    bool paused = false;
  };
  struct PortAcct {
    uint32_t reserveUsed = 0;  // the port's reserve in use, all classes
  };
  // PGs exist only for the classes that need one (lossless, or every VL on InfiniBand): slot_
  // maps a class to its PG among a port's pgsPerPort_ (-1: none).
  Pg& pg(uint32_t port, uint8_t tc) { return pgs_[port * pgsPerPort_ + static_cast<uint32_t>(slot_[tc])]; }
  const Pg& pg(uint32_t port, uint8_t tc) const {
    return pgs_[port * pgsPerPort_ + static_cast<uint32_t>(slot_[tc])];
  }
  uint64_t xonThreshold() const;
  /// Moves up to `bytes` into the port's reserve (counted in the PG); returns what did not fit.
  uint32_t takeReserve(uint32_t port, Pg& g, uint32_t bytes);
  void giveReserve(uint32_t port, Pg& g, uint32_t bytes) {
    g.reserveUsed -= bytes;
    ports_[port].reserveUsed -= bytes;
  }

  // What every packet touches first, on one cache line.
  uint64_t sharedSize_ = 0;
  uint64_t sharedUsed_ = 0;
  uint64_t used_ = 0;
  double lossyAlpha_ = 1.0;  // config_->lossyAlpha, here on the hot line
  const Config* config_ = nullptr;
  uint32_t pgsPerPort_ = 0;
  int8_t slot_[kTrafficClasses] = {-1, -1, -1, -1, -1, -1, -1, -1};
  std::vector<Pg> pgs_;                 // per (port, lossless or credit-accounted class)
  std::vector<PortAcct> ports_;         // per port
  std::vector<uint64_t> headroom_;      // per port, for each lossless class
  std::vector<uint64_t> peakHeadroom_;  // per port
  std::vector<uint64_t> peakCredited_;  // per port: most bytes one VL held (InfiniBand)
  uint64_t carved_ = 0;
};

}  // namespace fabricsim
