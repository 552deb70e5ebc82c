#include "pstrain/observe/downsampled_series.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pstrain::observe {

DownsampledSeries::DownsampledSeries(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 2)) {}

void DownsampledSeries::add(const Point& point) {
  const bool onStride = added_++ % stride_ == 0;
  if (!onStride) {
    latest_ = point;
    return;
  }
  latest_.reset();
  kept_.push_back(point);
  if (kept_.size() <= capacity_) return;
  // Keep every other point (the first among them) and take twice the stride from now on.
  const Point newest = kept_.back();
  std::size_t out = 0;
  for (std::size_t in = 0; in < kept_.size(); in += 2) kept_[out++] = kept_[in];
  if ((kept_.size() - 1) % 2 != 0) latest_ = newest;  // it fell between the new strides
  kept_.resize(out);
  stride_ *= 2;
}

std::vector<DownsampledSeries::Point> DownsampledSeries::points() const {
  auto points = kept_;
  if (latest_) points.push_back(*latest_);
  return points;
}

std::string DownsampledSeries::json() const {
  std::string out = "[";
  for (const auto& p : points()) {
    if (out.size() > 1) out += ',';
    out += fmt::format("[{},{:.3f},{}]", p.step, p.time, p.value);
  }
  return out + "]";
}

}  // namespace pstrain::observe
