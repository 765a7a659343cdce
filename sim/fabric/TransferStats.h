// TransferStats: the flow completion times and slowdowns of delivered transfers, as streaming
// statistics (no record per transfer), apart for network transfers (NIC to NIC) and NVLink ones
// (inside a host), whose times differ by orders of magnitude and would hide each other.
//
// Models: per category, a QuantileSketch of FCTs (delivery minus request, in microseconds) and
// one of slowdowns (FCT / the transfer's ideal time on an idle fabric; 1 where the ideal is 0).
// Counts, means and maxima are exact; quantiles are within the sketches' relative accuracy
// (QuantileSketch::kDefaultAlpha, 0.5%) of the nearest-rank quantiles of every transfer.
// Both categories together are their merge, which loses nothing.
// Leaves out: transfers not delivered (failed or still in flight): the backends count those.
// Units: microseconds (FCT), dimensionless (slowdown).
#pragma once

#include <cstddef>

#include "sim/core/QuantileSketch.h"
#include "sim/core/Time.h"

namespace fabricsim {

class TransferStats {
 public:
  struct Category {
    QuantileSketch fctUs;
    QuantileSketch slowdown;
    uint64_t count() const { return fctUs.count(); }
    size_t memoryBytes() const { return fctUs.memoryBytes() + slowdown.memoryBytes(); }
  };

  /// A transfer was delivered `fct` after it was requested; alone it would have taken `ideal`.
  void add(bool nvlink, Time fct, Time ideal) {
    const double f = fct.micros();
    const double i = ideal.micros();
    Category& c = nvlink ? nvlink_ : network_;
    c.fctUs.add(f);
    c.slowdown.add(i > 0 ? f / i : 1.0);
  }

  const Category& network() const { return network_; }
  const Category& nvlink() const { return nvlink_; }
  /// Every delivered transfer, both categories merged.
  Category all() const {
    Category c = network_;
    c.fctUs.merge(nvlink_.fctUs);
    c.slowdown.merge(nvlink_.slowdown);
    return c;
  }
  size_t memoryBytes() const { return network_.memoryBytes() + nvlink_.memoryBytes(); }

 private:
  Category network_, nvlink_;
};

}  // namespace fabricsim
