#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "pstrain/common/bytes.hpp"
#include "pstrain/config/config.hpp"

namespace pstrain::ps {

// Updates a block of parameters from its gradient. Holds its own state (Adam's moments) for
// exactly `size` parameters.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual void apply(float* params, const float* gradient) = 0;
  // The optimizer's state, for checkpoints; restore() takes what save() wrote.
  virtual void save(ByteWriter& out) const = 0;
  virtual void restore(ByteReader& in) = 0;
};

class Sgd : public Optimizer {
 public:
  Sgd(size_t size, float learningRate) : size_(size), learningRate_(learningRate) {}
  void apply(float* params, const float* gradient) override;
  void save(ByteWriter&) const override {}
  void restore(ByteReader&) override {}

 private:
  size_t size_;
  float learningRate_;
};

// Adam (Kingma & Ba) with the usual defaults beta1 0.9, beta2 0.999, epsilon 1e-8.
class Adam : public Optimizer {
 public:
  Adam(size_t size, float learningRate);
  void apply(float* params, const float* gradient) override;
  void save(ByteWriter& out) const override;
  void restore(ByteReader& in) override;

 private:
  float learningRate_;
  std::vector<float> firstMoment_;
  std::vector<float> secondMoment_;
  double beta1Power_ = 1.0;
  double beta2Power_ = 1.0;
};

std::unique_ptr<Optimizer> makeOptimizer(config::OptimizerKind kind, size_t size,
                                         double learningRate);

}  // namespace pstrain::ps
