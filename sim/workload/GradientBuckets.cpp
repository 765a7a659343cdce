#include "sim/workload/GradientBuckets.h"

#include <algorithm>
#include <utility>

namespace fabricsim {

GradientBuckets::GradientBuckets(std::vector<Segment> segments, int64_t bucketElements, bool split,
                                 int chunks, const std::function<int64_t(int64_t)>& elementsOf)
    : segments_(std::move(segments)) {
  std::vector<int64_t>& boundary = segmentEnd_;
  for (const Segment& seg : segments_) {
    totalParams_ += seg.params;
    boundary.push_back(elementsOf(totalParams_));
  }
  const int64_t elements = boundary.empty() ? 0 : boundary.back();
  if (split) {
    for (int64_t start = 0; start < elements;) {
      const int64_t end = std::min(start + std::max<int64_t>(1, bucketElements), elements);
      bucketEnd_.push_back(end);
      start = end;
    }
  }
  size_t seg = 0;
  for (const int64_t end : bucketEnd_) {
    while (boundary[seg] < end) ++seg;
    lastSegment_.push_back(seg);
  }
  chunkBucket_.assign(static_cast<size_t>(chunks), -1);
  for (size_t i = 0; i < segments_.size(); ++i) {
    // A chunk's first parameters in forward order are its last segment in backward order: the
    // bucket holding that segment's last element.
    const auto it = std::lower_bound(bucketEnd_.begin(), bucketEnd_.end(), boundary[i]);
    if (it != bucketEnd_.end())
      chunkBucket_[static_cast<size_t>(segments_[i].chunk)] = static_cast<int>(it - bucketEnd_.begin());
  }
}

bool GradientBuckets::holds(size_t k, size_t i) const {
  const int64_t bucketStart = k == 0 ? 0 : bucketEnd_[k - 1];
  const int64_t segmentStart = i == 0 ? 0 : segmentEnd_[i - 1];
  return segmentStart < bucketEnd_[k] && bucketStart < segmentEnd_[i];
}

}  // namespace fabricsim
