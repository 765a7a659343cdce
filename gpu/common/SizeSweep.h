// SizeSweep: the message sizes of an nccl-tests style sweep, and nccl-tests' size syntax.
//
// Models: sizes from min to max (inclusive), multiplied by `factor` when factor > 1, else
// increased by `step` bytes, exactly as nccl-tests' -b/-e/-f/-i loop does. Sizes are written
// "8", "128K", "64M", "1G" (binary multiples, as nccl-tests reads them), with "KiB"/"MiB"/"GiB"
// and "KB"/"MB"/"GB" accepted as the same binary multiples.
// Leaves out: rounding sizes to the ranks or element size (Collective does that per call).
// Units: bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace fabricsim::gpu {

/// Parses a size such as "8", "1.5K", "128M", "1G", "32MiB"; nullopt for anything else.
std::optional<size_t> parseSize(std::string_view text);

/// The sizes of a sweep. Requires min <= max and (factor > 1 or step > 0); returns an empty list
/// otherwise. A min of 0 with a factor > 1 yields the single size 0.
std::vector<size_t> sweepSizes(size_t minBytes, size_t maxBytes, size_t factor, size_t stepBytes);

}  // namespace fabricsim::gpu
