#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pstrain::observe {

// One curve of a whole run (loss or accuracy against step and time) in bounded memory, for the
// page: TensorBoard keeps a reservoir per tag for the same reason. Unlike a random reservoir,
// the points kept are every stride-th one added, the stride doubling whenever more than
// `capacity` are kept, so they stay evenly spread over the run; the first point and the latest
// are always among points(). Not thread-safe: its owner locks.
class DownsampledSeries {
 public:
  struct Point {
    std::uint64_t step;
    double time;  // Unix seconds
    double value;
  };

  explicit DownsampledSeries(std::size_t capacity);

  void add(const Point& point);
  // The points kept, oldest first, ending with the latest added.
  std::vector<Point> points() const;
  // The points as JSON: [[step, time, value], ...].
  std::string json() const;

 private:
  const std::size_t capacity_;
  std::uint64_t stride_ = 1;
  std::uint64_t added_ = 0;
  std::vector<Point> kept_;      // points 0, stride, 2·stride, … of those added
  std::optional<Point> latest_;  // the latest point, when it falls between strides
};

}  // namespace pstrain::observe
