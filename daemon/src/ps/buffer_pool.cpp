#include "pstrain/ps/buffer_pool.hpp"

namespace pstrain::ps {

std::shared_ptr<BufferPool> BufferPool::create(size_t floats) {
  return std::shared_ptr<BufferPool>(new BufferPool(floats));
}

std::shared_ptr<float> BufferPool::take() {
  float* buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      buffer = buffers_.emplace_back(floats_).data();
    } else {
      buffer = free_.back();
      free_.pop_back();
    }
  }
  return std::shared_ptr<float>(buffer, [pool = shared_from_this()](float* returned) {
    std::lock_guard<std::mutex> lock(pool->mutex_);
    pool->free_.push_back(returned);
  });
}

}  // namespace pstrain::ps
