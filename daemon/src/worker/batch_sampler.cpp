#include "pstrain/worker/batch_sampler.hpp"

#include <algorithm>
#include <numeric>

#include "pstrain/common/error.hpp"

namespace pstrain::worker {

Slice partOf(size_t total, std::uint32_t rank, std::uint32_t count) {
  return Slice{total * rank / count, total * (size_t(rank) + 1) / count};
}

BatchSampler::BatchSampler(size_t exampleCount, size_t batchSize, std::uint64_t seed)
    : exampleCount_(exampleCount), slice_{0, 0}, batch_(batchSize), position_(0), generator_(seed) {
  if (exampleCount == 0) throw DataError("no training examples to sample from");
  divide(0, 1);
}

void BatchSampler::divide(std::uint32_t rank, std::uint32_t count) {
  slice_ = partOf(exampleCount_, rank, count);
  // A part smaller than a batch (more workers than examples) still samples: an empty one
  // samples the whole set.
  if (slice_.begin == slice_.end) slice_ = Slice{0, exampleCount_};
  order_.resize(slice_.end - slice_.begin);
  std::iota(order_.begin(), order_.end(), std::uint32_t(slice_.begin));
  position_ = order_.size();  // the next batch shuffles
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
