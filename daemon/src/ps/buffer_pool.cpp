#include "pstrain/ps/buffer_pool.hpp"

namespace pstrain::ps {

std::shared_ptr<BufferPool> BufferPool::create(size_t floats) {
  return std::shared_ptr<BufferPool>(new BufferPool(floats));
}

std::shared_ptr<float> BufferPool::take() {
  std::unique_ptr<float[]> buffer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      buffer = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!buffer) buffer.reset(new float[floats_]);
  return std::shared_ptr<float>(buffer.release(), [pool = shared_from_this()](float* returned) {
    std::lock_guard<std::mutex> lock(pool->mutex_);
    pool->free_.emplace_back(returned);
  });
}

}  // namespace pstrain::ps
