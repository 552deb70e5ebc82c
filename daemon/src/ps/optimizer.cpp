#include "pstrain/ps/optimizer.hpp"

#include <cmath>

#include "pstrain/common/cpu_features.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::ps {
namespace {
constexpr float kBeta1 = 0.9f;
constexpr float kBeta2 = 0.999f;
constexpr float kEpsilon = 1e-8f;

// One step of each optimizer over params[begin, end), compiled for any x86-64 (SSE2), for CPUs
// with AVX2 and FMA, and for AVX-512, and chosen once at run time: the binary runs everywhere and
// the ps's optimizer runs at memory speed where it can (8 or 16 floats an instruction instead of
// 4). Each step is one call through a function pointer: with the loop over steps and the loop over
// parameters in one function, GCC's -O3 unroll-and-jam fused them into one scalar loop (measured
// on Zen 5: 130 us instead of 21 per step of 101,770 parameters once 3 or more steps were
// applied together).
//
// Each kernel comes in place (params) and out of place (from `in` into `out`, which must not
// overlap): the first step of a batch writes the ps's next parameters straight into the buffer
// its answers carry, so they need no copy.
inline __attribute__((always_inline)) float sgdUpdate(float param, float g, float learningRate) {
  return param - learningRate * g;
}

inline __attribute__((always_inline)) float adamUpdate(float param, float& m, float& v, float g,
                                                       float step) {
  m = kBeta1 * m + (1.0f - kBeta1) * g;
  v = kBeta2 * v + (1.0f - kBeta2) * g * g;
  return param - step * m / (std::sqrt(v) + kEpsilon);
}

inline __attribute__((always_inline)) void sgdStep(const float* __restrict in,
                                                   float* __restrict out,
                                                   const float* __restrict g, float learningRate,
                                                   size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) out[i] = sgdUpdate(in[i], g[i], learningRate);
}

inline __attribute__((always_inline)) void sgdStep(float* __restrict params,
                                                   const float* __restrict g, float learningRate,
                                                   size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) params[i] = sgdUpdate(params[i], g[i], learningRate);
}

inline __attribute__((always_inline)) void adamStep(const float* __restrict in,
                                                    float* __restrict out, float* __restrict m,
                                                    float* __restrict v,
                                                    const float* __restrict g, float step,
                                                    size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) out[i] = adamUpdate(in[i], m[i], v[i], g[i], step);
}

inline __attribute__((always_inline)) void adamStep(float* __restrict params,
                                                    float* __restrict m, float* __restrict v,
                                                    const float* __restrict g, float step,
                                                    size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) params[i] = adamUpdate(params[i], m[i], v[i], g[i], step);
}

using SgdKernel = void (*)(float*, const float*, float, size_t, size_t);
using SgdIntoKernel = void (*)(const float*, float*, const float*, float, size_t, size_t);
using AdamKernel = void (*)(float*, float*, float*, const float*, float, size_t, size_t);
using AdamIntoKernel = void (*)(const float*, float*, float*, float*, const float*, float,
                                size_t, size_t);

// One set of kernels per instruction-set level.
#define PSTRAIN_KERNELS(suffix, target)                                                          \
  target void sgdStep##suffix(float* params, const float* g, float learningRate, size_t begin,  \
                              size_t end) {                                                     \
    sgdStep(params, g, learningRate, begin, end);                                               \
  }                                                                                             \
  target void sgdStepInto##suffix(const float* in, float* out, const float* g,                  \
                                  float learningRate, size_t begin, size_t end) {               \
    sgdStep(in, out, g, learningRate, begin, end);                                              \
  }                                                                                             \
  target void adamStep##suffix(float* params, float* m, float* v, const float* g, float step,   \
                               size_t begin, size_t end) {                                      \
    adamStep(params, m, v, g, step, begin, end);                                                \
  }                                                                                             \
  target void adamStepInto##suffix(const float* in, float* out, float* m, float* v,             \
                                   const float* g, float step, size_t begin, size_t end) {      \
    adamStep(in, out, m, v, g, step, begin, end);                                               \
  }
PSTRAIN_KERNELS(Baseline, )  // the compiler's default target: SSE2 on x86-64
#if defined(__x86_64__)
PSTRAIN_KERNELS(Avx2, __attribute__((target("avx2,fma"))))
PSTRAIN_KERNELS(Avx512, __attribute__((target("avx512f,avx2,fma"))))
#endif
#undef PSTRAIN_KERNELS

struct Kernels {
  SgdKernel sgd;
  SgdIntoKernel sgdInto;
  AdamKernel adam;
  AdamIntoKernel adamInto;
};

const Kernels& kernels() {
  static const Kernels chosen = [] {
#if defined(__x86_64__)
    const auto cpu = readCpuFeatures();
    const std::uint32_t usable = cpu ? cpu->usable() : 0;
    if (usable & kAvx512F) {
      return Kernels{sgdStepAvx512, sgdStepIntoAvx512, adamStepAvx512, adamStepIntoAvx512};
    }
    if ((usable & kAvx2) && (usable & kFma)) {
      return Kernels{sgdStepAvx2, sgdStepIntoAvx2, adamStepAvx2, adamStepIntoAvx2};
    }
#endif
    return Kernels{sgdStepBaseline, sgdStepIntoBaseline, adamStepBaseline, adamStepIntoBaseline};
  }();
  return chosen;
}

}  // namespace

void Sgd::applySteps(const float* in, float* out, const float* const* gradients, size_t begin,
                     size_t end) {
  const auto& chosen = kernels();
  for (size_t s = 0; s < steps_; ++s) {
    if (s == 0 && in != out) {
      chosen.sgdInto(in, out, gradients[s], stepSize_, begin, end);
    } else {
      chosen.sgd(out, gradients[s], stepSize_, begin, end);
    }
  }
}

Adam::Adam(size_t size, float learningRate)
    : learningRate_(learningRate), firstMoment_(size, 0.0f), secondMoment_(size, 0.0f) {}

void Adam::beginSteps(size_t count, float learningRateScale) {
  stepSizes_.resize(count);
  for (auto& stepSize : stepSizes_) {
    beta1Power_ *= kBeta1;
    beta2Power_ *= kBeta2;
    // Bias correction folded into the step size, as in the paper's efficient form.
    stepSize = float(learningRate_ * learningRateScale * std::sqrt(1.0 - beta2Power_) /
                     (1.0 - beta1Power_));
  }
}

void Adam::applySteps(const float* in, float* out, const float* const* gradients, size_t begin,
                      size_t end) {
  // Step by step over the range: the caller keeps ranges small enough to stay in cache, so the
  // moments and parameters are read from memory once for all the steps.
  const auto& chosen = kernels();
  float* m = firstMoment_.data();
  float* v = secondMoment_.data();
  for (size_t s = 0; s < stepSizes_.size(); ++s) {
    if (s == 0 && in != out) {
      chosen.adamInto(in, out, m, v, gradients[s], stepSizes_[s], begin, end);
    } else {
      chosen.adam(out, m, v, gradients[s], stepSizes_[s], begin, end);
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

OptimizerState Adam::state() const {
  OptimizerState state;
  state.moments.emplace_back(firstMoment_.begin(), firstMoment_.end());
  state.moments.emplace_back(secondMoment_.begin(), secondMoment_.end());
  state.scalars[0] = beta1Power_;
  state.scalars[1] = beta2Power_;
  return state;
}

void Adam::setState(const OptimizerState& state) {
  if (state.moments.empty()) {  // none came with the parameters: they start again
    std::fill(firstMoment_.begin(), firstMoment_.end(), 0.0f);
    std::fill(secondMoment_.begin(), secondMoment_.end(), 0.0f);
    beta1Power_ = beta2Power_ = 1.0;
    return;
  }
  if (state.moments.size() != 2 || state.moments[0].size() != firstMoment_.size() ||
      state.moments[1].size() != secondMoment_.size()) {
    throw DecodeError("Adam's state is two moments of " + std::to_string(firstMoment_.size()) +
                      " parameters");
  }
  std::copy(state.moments[0].begin(), state.moments[0].end(), firstMoment_.begin());
  std::copy(state.moments[1].begin(), state.moments[1].end(), secondMoment_.begin());
  beta1Power_ = state.scalars[0];
  beta2Power_ = state.scalars[1];
}

void Sgd::setState(const OptimizerState& state) {
  if (!state.moments.empty()) throw DecodeError("SGD keeps no moments");
}

std::unique_ptr<Optimizer> makeOptimizer(OptimizerKind kind, size_t size,
                                         double learningRate) {
  if (kind == OptimizerKind::kSgd) return std::make_unique<Sgd>(float(learningRate));
  return std::make_unique<Adam>(size, float(learningRate));
}

}  // namespace pstrain::ps
