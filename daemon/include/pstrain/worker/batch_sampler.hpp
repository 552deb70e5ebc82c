#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "pstrain/worker/slice.hpp"

namespace pstrain::worker {

// Part `rank` of `count` of `total` examples: contiguous, the parts 0 to count - 1 covering the
// set once.
Slice partOf(size_t total, std::uint32_t rank, std::uint32_t count);

// Draws batches of example indices from one slice of the training set without replacement,
// reshuffling at every epoch. The slice is the whole set until divide() says otherwise.
class BatchSampler {
 public:
  BatchSampler(size_t exampleCount, size_t batchSize, std::uint64_t seed);

  // Samples from part `rank` of `count` from now on, beginning an epoch of it (the workers
  // connected changed, and with them this worker's share).
  void divide(std::uint32_t rank, std::uint32_t count);
  Slice slice() const { return slice_; }

  // The indices of the next batch (batchSize of them).
  const std::uint32_t* next();

 private:
  const size_t exampleCount_;
  Slice slice_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> batch_;
  size_t position_;
  std::mt19937_64 generator_;
};

}  // namespace pstrain::worker
