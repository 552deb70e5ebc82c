#pragma once

#include <cstdint>

namespace pstrain::ps {

// The learning rate of a sync step as a multiple of the configured one. A step that averages k
// workers' gradients is a step on a batch k times as large, with k times less noise: it takes
// k times the learning rate for SGD (Goyal et al. 2017, "linear scaling") and √k for Adam, whose
// steps are normalised by the gradient's spread. The multiple rises linearly from 1 over the first
// `warmupSteps` global steps, while the parameters are far from any minimum (Goyal's warm-up).
struct SyncLearningRate {
  bool scaled = false;      // false: always the configured rate
  bool squareRoot = true;   // √k (Adam) or k (SGD)
  std::uint64_t warmupSteps = 0;

  float scale(int gradients, std::uint64_t globalStep) const;
};

}  // namespace pstrain::ps
