#pragma once

#include <cstdint>

#include "pstrain/ps/shard_range.hpp"

namespace pstrain::ps {

// Where a ps stands in a cut of the parameters: generation 0 is the cut the configuration
// makes, each re-cut the next; the ps of a run serve slices of one generation that tile the
// parameters in ps order.
struct CutPosition {
  std::uint64_t generation = 0;
  int psCount = 1;
  int index = 0;
  ShardRange range{0, 0};

  bool operator==(const CutPosition& other) const {
    return generation == other.generation && psCount == other.psCount && index == other.index &&
           range.offset == other.range.offset && range.count == other.range.count;
  }
};

}  // namespace pstrain::ps
