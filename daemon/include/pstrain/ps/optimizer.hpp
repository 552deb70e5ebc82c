#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/common/bytes.hpp"
#include "pstrain/ps/optimizer_kind.hpp"

namespace pstrain::ps {

// An optimizer's state laid out per parameter, so that it can be cut by range and joined again:
// a re-cut of the ps moves it with the parameters (Adam: its first and second moments, and
// beta1 and beta2 to the power of its steps).
struct OptimizerState {
  std::vector<std::vector<float>> moments;  // each one float per parameter
  double scalars[2] = {1.0, 1.0};
};

// Updates a block of parameters from gradients, one optimizer step per gradient. Holds its own
// state (Adam's moments) for exactly `size` parameters.
//
// A step is prepared once (beginSteps) and then applied range by range (applySteps), so several
// gradients that arrive together are applied in one pass over memory, and disjoint ranges of the
// same steps can be applied by different threads at once. The result is the same as applying
// each gradient to the whole vector in turn.
class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Makes the next `count` steps (1 to kMaxSteps) the ones applySteps() applies, at
  // `learningRateScale` times the configured learning rate.
  virtual void beginSteps(size_t count, float learningRateScale) = 0;
  void beginSteps(size_t count) { beginSteps(count, 1.0f); }
  // Applies the steps begun last, gradients[0] first, to in[begin, end) and writes the result to
  // out[begin, end): in place when `in` is `out`, otherwise the two must not overlap and `in` is
  // only read. Thread-safe for disjoint ranges.
  virtual void applySteps(const float* in, float* out, const float* const* gradients,
                          size_t begin, size_t end) = 0;

  // One step over the whole vector, in place or from `in` into `out`.
  void apply(const float* in, float* out, const float* gradient, size_t size,
             float learningRateScale = 1.0f) {
    beginSteps(1, learningRateScale);
    applySteps(in, out, &gradient, 0, size);
  }
  void apply(float* params, const float* gradient, size_t size) {
    apply(params, params, gradient, size);
  }

  // The optimizer's state, for checkpoints; restore() takes what save() wrote.
  virtual void save(ByteWriter& out) const = 0;
  virtual void restore(ByteReader& in) = 0;

  // The same, per parameter; setState() takes one of this optimizer's kind and size, or one with
  // no moments (the state starts again), else throws DecodeError.
  virtual OptimizerState state() const = 0;
  virtual void setState(const OptimizerState& state) = 0;
  // Each moment's values, one per parameter, in state()'s order, without a copy: for a
  // checksum, read while no step is applied.
  virtual std::vector<const float*> moments() const = 0;

  static constexpr size_t kMaxSteps = 64;
};

class Sgd : public Optimizer {
 public:
  explicit Sgd(float learningRate) : learningRate_(learningRate) {}
  using Optimizer::beginSteps;
  void beginSteps(size_t count, float learningRateScale) override {
    steps_ = count;
    stepSize_ = learningRate_ * learningRateScale;
  }
  void applySteps(const float* in, float* out, const float* const* gradients, size_t begin,
                  size_t end) override;
  void save(ByteWriter&) const override {}
  void restore(ByteReader&) override {}
  OptimizerState state() const override { return {}; }
  void setState(const OptimizerState& state) override;
  std::vector<const float*> moments() const override { return {}; }

 private:
  float learningRate_;
  float stepSize_ = 0;
  size_t steps_ = 0;
};

// Adam (Kingma & Ba) with the usual defaults beta1 0.9, beta2 0.999, epsilon 1e-8.
class Adam : public Optimizer {
 public:
  Adam(size_t size, float learningRate);
  using Optimizer::beginSteps;
  void beginSteps(size_t count, float learningRateScale) override;
  void applySteps(const float* in, float* out, const float* const* gradients, size_t begin,
                  size_t end) override;
  void save(ByteWriter& out) const override;
  void restore(ByteReader& in) override;
  OptimizerState state() const override;
  void setState(const OptimizerState& state) override;
  std::vector<const float*> moments() const override {
    return {firstMoment_.data(), secondMoment_.data()};
  }

 private:
  float learningRate_;
  AlignedVector<float> firstMoment_;
  AlignedVector<float> secondMoment_;
  double beta1Power_ = 1.0;
  double beta2Power_ = 1.0;
  std::vector<float> stepSizes_;  // of the steps begun last, bias correction folded in
};

std::unique_ptr<Optimizer> makeOptimizer(OptimizerKind kind, size_t size,
                                         double learningRate);

}  // namespace pstrain::ps
