// GradientBuckets: Megatron's data-parallel gradient buckets of one pipeline stage's rank.
//
// Models: the rank's parameters as segments in the order their gradients become final in
// backward (chunks from the last to the first; in each the output layer, the layers from the
// last to the first, the embedding), laid end to end in the rank's gradient buffer; buckets of
// `bucketElements` consecutive elements from the start, the last one smaller (Megatron's DDP and
// distributed optimizer fill buckets in this order). A bucket is ready when the segment holding
// its last element is final. Positions are the rank's elements, given by `elementsOf` of the
// cumulative parameter count (dense layers: ceil(parameters / tp); experts: their own count).
// Leaves out: padding of buckets to the DP size (the distributed optimizer's alignment).
// Units: elements (parameters of this rank), counts.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace fabricsim {

class GradientBuckets {
 public:
  struct Segment {
    int64_t params;
    int chunk;
    int layer;  ///< layer in the chunk; -1 the output layer, -2 the embedding
  };

  /// `segments` in backward order; no buckets when `split` is false (one data-parallel rank).
  GradientBuckets(std::vector<Segment> segments, int64_t bucketElements, bool split, int chunks,
                  const std::function<int64_t(int64_t)>& elementsOf);

  const std::vector<Segment>& segments() const { return segments_; }
  int64_t totalParams() const { return totalParams_; }
  size_t buckets() const { return bucketEnd_.size(); }
  int64_t elements(size_t k) const { return bucketEnd_[k] - (k == 0 ? 0 : bucketEnd_[k - 1]); }
  /// The segment holding bucket k's last element (the bucket is ready when it is final).
  size_t lastSegment(size_t k) const { return lastSegment_[k]; }
  /// Whether bucket k holds any element of segment i (a bucket waits for all of its segments;
  /// the one holding its last element is the last final unless a gradient is deferred).
  bool holds(size_t k, size_t i) const;
  /// The bucket holding chunk c's first parameters in forward order, or -1 (no buckets).
  int chunkBucket(int chunk) const { return chunkBucket_[static_cast<size_t>(chunk)]; }

 private:
  std::vector<Segment> segments_;
  int64_t totalParams_ = 0;
  std::vector<int64_t> bucketEnd_;  ///< the rank's elements up to the end of each bucket
  std::vector<int64_t> segmentEnd_;  ///< the rank's elements up to the end of each segment
  std::vector<size_t> lastSegment_;
  std::vector<int> chunkBucket_;
};

}  // namespace fabricsim
