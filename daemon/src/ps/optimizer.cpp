#include "pstrain/ps/optimizer.hpp"

#include <cmath>

namespace pstrain::ps {
namespace {
constexpr float kBeta1 = 0.9f;
constexpr float kBeta2 = 0.999f;
constexpr float kEpsilon = 1e-8f;
}  // namespace

void Sgd::applySteps(float* __restrict params, const float* const* gradients, size_t begin,
                     size_t end) {
  for (size_t s = 0; s < steps_; ++s) {
    const float* __restrict g = gradients[s];
    for (size_t i = begin; i < end; ++i) params[i] -= learningRate_ * g[i];
  }
}

Adam::Adam(size_t size, float learningRate)
    : learningRate_(learningRate), firstMoment_(size, 0.0f), secondMoment_(size, 0.0f) {}

void Adam::beginSteps(size_t count) {
  stepSizes_.resize(count);
  for (auto& stepSize : stepSizes_) {
    beta1Power_ *= kBeta1;
    beta2Power_ *= kBeta2;
    // Bias correction folded into the step size, as in the paper's efficient form.
    stepSize = float(learningRate_ * std::sqrt(1.0 - beta2Power_) / (1.0 - beta1Power_));
  }
}

void Adam::applySteps(float* __restrict params, const float* const* gradients, size_t begin,
                      size_t end) {
  float* __restrict m = firstMoment_.data();
  float* __restrict v = secondMoment_.data();
  // Step by step over the range: the caller keeps ranges small enough to stay in cache, so the
  // moments and parameters are read from memory once for all the steps.
  for (size_t s = 0; s < stepSizes_.size(); ++s) {
    const float* __restrict g = gradients[s];
    const float step = stepSizes_[s];
    for (size_t i = begin; i < end; ++i) {
      m[i] = kBeta1 * m[i] + (1.0f - kBeta1) * g[i];
      v[i] = kBeta2 * v[i] + (1.0f - kBeta2) * g[i] * g[i];
      params[i] -= step * m[i] / (std::sqrt(v[i]) + kEpsilon);
    }
  }
}

void Adam::save(ByteWriter& out) const {
  out.put(beta1Power_).put(beta2Power_);
  out.putFloats(firstMoment_.data(), firstMoment_.size());
  out.putFloats(secondMoment_.data(), secondMoment_.size());
}

void Adam::restore(ByteReader& in) {
  beta1Power_ = in.get<double>();
  beta2Power_ = in.get<double>();
  in.getFloats(firstMoment_.data(), firstMoment_.size());
  in.getFloats(secondMoment_.data(), secondMoment_.size());
}

std::unique_ptr<Optimizer> makeOptimizer(config::OptimizerKind kind, size_t size,
                                         double learningRate) {
  if (kind == config::OptimizerKind::kSgd) return std::make_unique<Sgd>(float(learningRate));
  return std::make_unique<Adam>(size, float(learningRate));
}

}  // namespace pstrain::ps
