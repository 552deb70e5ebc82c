#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"

namespace pstrain::ps {

// Buffers of one size, reused most recently returned first: the buffer a thread takes is the
// one likeliest still in cache, and a ps holds as many as are in use at once, not one per
// connection. Each starts on a cache line and is kept until the pool is gone. Thread-safe.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static std::shared_ptr<BufferPool> create(size_t floats);

  // A buffer of `floats` floats, uninitialised. It returns to the pool when the last copy of the
  // pointer is gone, which may outlive every other reference to the pool.
  std::shared_ptr<float> take();

 private:
  explicit BufferPool(size_t floats) : floats_(floats) {}

  const size_t floats_;
  std::mutex mutex_;
  std::vector<AlignedVector<float>> buffers_;  // every buffer the pool has made
  std::vector<float*> free_;
};

}  // namespace pstrain::ps
