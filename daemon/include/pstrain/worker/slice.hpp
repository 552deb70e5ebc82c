#pragma once

#include <cstddef>

namespace pstrain::worker {

// Examples [begin, end) of a training set.
struct Slice {
  size_t begin;
  size_t end;
};

}  // namespace pstrain::worker
