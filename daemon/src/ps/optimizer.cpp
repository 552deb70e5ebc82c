#include "pstrain/ps/optimizer.hpp"

#include <cmath>

namespace pstrain::ps {
namespace {
constexpr float kBeta1 = 0.9f;
constexpr float kBeta2 = 0.999f;
constexpr float kEpsilon = 1e-8f;

// The update loops, compiled twice: for any x86-64 (SSE2) and for CPUs with AVX2 and FMA, chosen
// at run time. The binary runs everywhere and the ps's optimizer runs at memory speed where it
// can: 8 floats a step instead of 4, the moments' updates fused.
#if defined(__x86_64__)
#define PSTRAIN_WIDE __attribute__((target("avx2,fma")))
bool wide() {
  static const bool supported = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") &&
                                                           __builtin_cpu_supports("fma"));
  return supported;
}
#else
#define PSTRAIN_WIDE
bool wide() { return false; }
#endif

inline __attribute__((always_inline)) void sgdSteps(float* __restrict params,
                                                    const float* const* gradients, size_t steps,
                                                    float learningRate, size_t begin,
                                                    size_t end) {
  for (size_t s = 0; s < steps; ++s) {
    const float* __restrict g = gradients[s];
    for (size_t i = begin; i < end; ++i) params[i] -= learningRate * g[i];
  }
}

PSTRAIN_WIDE void sgdStepsWide(float* params, const float* const* gradients, size_t steps,
                               float learningRate, size_t begin, size_t end) {
  sgdSteps(params, gradients, steps, learningRate, begin, end);
}

inline __attribute__((always_inline)) void adamSteps(float* __restrict params,
                                                     float* __restrict m, float* __restrict v,
                                                     const float* const* gradients,
                                                     const float* stepSizes, size_t steps,
                                                     size_t begin, size_t end) {
  for (size_t s = 0; s < steps; ++s) {
    const float* __restrict g = gradients[s];
    const float step = stepSizes[s];
    for (size_t i = begin; i < end; ++i) {
      m[i] = kBeta1 * m[i] + (1.0f - kBeta1) * g[i];
      v[i] = kBeta2 * v[i] + (1.0f - kBeta2) * g[i] * g[i];
      params[i] -= step * m[i] / (std::sqrt(v[i]) + kEpsilon);
    }
  }
}

PSTRAIN_WIDE void adamStepsWide(float* params, float* m, float* v, const float* const* gradients,
                                const float* stepSizes, size_t steps, size_t begin, size_t end) {
  adamSteps(params, m, v, gradients, stepSizes, steps, begin, end);
}

}  // namespace

void Sgd::applySteps(float* params, const float* const* gradients, size_t begin, size_t end) {
  if (wide()) return sgdStepsWide(params, gradients, steps_, learningRate_, begin, end);
  sgdSteps(params, gradients, steps_, learningRate_, begin, end);
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

void Adam::applySteps(float* params, const float* const* gradients, size_t begin, size_t end) {
  // Step by step over the range: the caller keeps ranges small enough to stay in cache, so the
  // moments and parameters are read from memory once for all the steps.
  if (wide()) {
    return adamStepsWide(params, firstMoment_.data(), secondMoment_.data(), gradients,
                         stepSizes_.data(), stepSizes_.size(), begin, end);
  }
  adamSteps(params, firstMoment_.data(), secondMoment_.data(), gradients, stepSizes_.data(),
            stepSizes_.size(), begin, end);
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
