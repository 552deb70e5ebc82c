#include "pstrain/ps/shard.hpp"

#include <algorithm>

#include "pstrain/common/bytes.hpp"

namespace pstrain::ps {

ShardRange shardRange(size_t parameterCount, int shards, int index) {
  auto begin = parameterCount * size_t(index) / size_t(shards);
  auto end = parameterCount * size_t(index + 1) / size_t(shards);
  return ShardRange{begin, end - begin};
}

Shard::Shard(std::vector<float> initial, std::unique_ptr<Optimizer> optimizer,
             std::uint64_t trainSteps, int syncWorkers)
    : params_(std::move(initial)),
      optimizer_(std::move(optimizer)),
      trainSteps_(trainSteps),
      syncWorkers_(syncWorkers),
      gradientSum_(syncWorkers > 0 ? params_.size() : 0, 0.0f) {}

Shard::StepResult Shard::resultLocked(bool applied, bool advanced) const {
  return StepResult{globalStep_, applied, advanced, globalStep_ >= trainSteps_};
}

Shard::StepResult Shard::push(const float* gradient, float* out) {
  std::unique_lock<std::mutex> lock(mutex_);
  StepResult result = resultLocked(false, false);
  if (globalStep_ >= trainSteps_ || closed_) {
    // Training has ended, or this ps is stopping: the gradient is dropped.
  } else if (syncWorkers_ == 0) {
    optimizer_->apply(params_.data(), gradient);
    ++globalStep_;
    result = resultLocked(true, true);
  } else {
    const auto step = globalStep_;
    float* sum = gradientSum_.data();
    for (size_t i = 0; i < params_.size(); ++i) sum[i] += gradient[i];
    if (++arrivals_ == syncWorkers_) {
      const float scale = 1.0f / float(syncWorkers_);
      for (auto& g : gradientSum_) g *= scale;
      optimizer_->apply(params_.data(), sum);
      std::fill(gradientSum_.begin(), gradientSum_.end(), 0.0f);
      arrivals_ = 0;
      ++globalStep_;
      stepAdvanced_.notify_all();
      result = resultLocked(true, true);
    } else {
      stepAdvanced_.wait(lock, [&] { return globalStep_ > step; });
      result = resultLocked(true, false);
    }
  }
  std::copy(params_.begin(), params_.end(), out);
  return result;
}

Shard::StepResult Shard::read(float* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::copy(params_.begin(), params_.end(), out);
  return resultLocked(false, false);
}

void Shard::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
}

Shard::StepResult Shard::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return resultLocked(false, false);
}

std::vector<std::uint8_t> Shard::serialize() const {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  out.put(globalStep_).put(std::uint64_t(params_.size())).putFloats(params_.data(), params_.size());
  optimizer_->save(out);
  return bytes;
}

void Shard::restore(const std::vector<std::uint8_t>& bytes) {
  ByteReader in(bytes.data(), bytes.size());
  std::lock_guard<std::mutex> lock(mutex_);
  auto step = in.get<std::uint64_t>();
  if (in.get<std::uint64_t>() != params_.size()) throw ProtocolError("shard size differs");
  in.getFloats(params_.data(), params_.size());
  optimizer_->restore(in);
  in.expectEnd();
  globalStep_ = step;
}

}  // namespace pstrain::ps
