#include "pstrain/ps/optimizer.hpp"

#include <cmath>

namespace pstrain::ps {
namespace {
constexpr float kBeta1 = 0.9f;
constexpr float kBeta2 = 0.999f;
constexpr float kEpsilon = 1e-8f;
}  // namespace

void Sgd::apply(float* params, const float* gradient) {
  for (size_t i = 0; i < size_; ++i) params[i] -= learningRate_ * gradient[i];
}

Adam::Adam(size_t size, float learningRate)
    : learningRate_(learningRate), firstMoment_(size, 0.0f), secondMoment_(size, 0.0f) {}

void Adam::apply(float* __restrict params, const float* __restrict gradient) {
  beta1Power_ *= kBeta1;
  beta2Power_ *= kBeta2;
  // Bias correction folded into the step size, as in the paper's efficient form.
  const float step = float(learningRate_ * std::sqrt(1.0 - beta2Power_) / (1.0 - beta1Power_));
  float* __restrict m = firstMoment_.data();
  float* __restrict v = secondMoment_.data();
  for (size_t i = 0, n = firstMoment_.size(); i < n; ++i) {
    m[i] = kBeta1 * m[i] + (1.0f - kBeta1) * gradient[i];
    v[i] = kBeta2 * v[i] + (1.0f - kBeta2) * gradient[i] * gradient[i];
    params[i] -= step * m[i] / (std::sqrt(v[i]) + kEpsilon);
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
  if (kind == config::OptimizerKind::kSgd) return std::make_unique<Sgd>(size, float(learningRate));
  return std::make_unique<Adam>(size, float(learningRate));
}

}  // namespace pstrain::ps
