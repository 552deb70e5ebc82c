#include "pstrain/worker/batch_sampler.hpp"

#include <algorithm>
#include <numeric>

#include "pstrain/common/error.hpp"

namespace pstrain::worker {

BatchSampler::BatchSampler(size_t exampleCount, size_t batchSize, std::uint64_t seed)
    : order_(exampleCount), batch_(batchSize), position_(exampleCount), generator_(seed) {
  if (exampleCount == 0) throw DataError("no training examples to sample from");
  std::iota(order_.begin(), order_.end(), 0u);
}

const std::uint32_t* BatchSampler::next() {
  // Batches may straddle epochs, so a batch larger than the data set still fills up.
  for (auto& index : batch_) {
    if (position_ == order_.size()) {
      std::shuffle(order_.begin(), order_.end(), generator_);
      position_ = 0;
    }
    index = order_[position_++];
  }
  return batch_.data();
}

}  // namespace pstrain::worker
