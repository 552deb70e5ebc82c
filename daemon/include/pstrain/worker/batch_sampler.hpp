#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace pstrain::worker {

// Draws batches of example indices without replacement, reshuffling at every epoch.
class BatchSampler {
 public:
  BatchSampler(size_t exampleCount, size_t batchSize, std::uint64_t seed);

  // The indices of the next batch (batchSize of them).
  const std::uint32_t* next();

 private:
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> batch_;
  size_t position_;
  std::mt19937_64 generator_;
};

}  // namespace pstrain::worker
