#pragma once

#include <cstddef>

namespace pstrain::ps {

// The contiguous slice [offset, offset + count) of the flat parameter vector that one ps owns.
struct ShardRange {
  size_t offset;
  size_t count;
};

// Splits `parameterCount` parameters into `shards` contiguous slices whose sizes differ by at
// most one, whatever the tensor boundaries: every ps carries the same load.
ShardRange shardRange(size_t parameterCount, int shards, int index);

}  // namespace pstrain::ps
