#include "pstrain/ps/sync_learning_rate.hpp"

#include <algorithm>
#include <cmath>

namespace pstrain::ps {

float SyncLearningRate::scale(int gradients, std::uint64_t globalStep) const {
  if (!scaled || gradients <= 1) return 1.0f;
  const double full = squareRoot ? std::sqrt(double(gradients)) : double(gradients);
  const double warmed =
      warmupSteps == 0 ? 1.0 : std::min(1.0, double(globalStep + 1) / double(warmupSteps));
  return float(1.0 + (full - 1.0) * warmed);
}

}  // namespace pstrain::ps
