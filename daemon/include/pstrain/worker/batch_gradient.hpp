#pragma once

#include <cstdint>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/ps/push_encoding.hpp"

namespace pstrain::worker {

// The gradient of a batch of training examples, in the form a push sends it: the layers whose
// weight gradients go to the ps as factors (ps::PushEncoding) are left as delta and input, and
// the outer product is skipped. Its buffers are reused from batch to batch.
class BatchGradient {
 public:
  // `factor`: weight gradients that ps::factorsLayer() picks are left as factors.
  BatchGradient(const model::Layout& layout, const data::Examples& train, size_t batchSize,
                bool factor = true);

  BatchGradient(const BatchGradient&) = delete;
  BatchGradient& operator=(const BatchGradient&) = delete;

  // The loss of the examples at `batch` (batchSize indices) on `params`; gradient() is theirs
  // until the next call.
  float compute(const float* params, const std::uint32_t* batch);
  const ps::Gradient& gradient() const { return gradient_; }

  // How many layers push their weight gradients as factors.
  long factoredLayers() const;

 private:
  const data::Examples& train_;
  model::Mlp mlp_;
  std::vector<std::uint8_t> labels_;
  AlignedVector<float> inputMemory_;
  arma::fmat inputs_;  // over inputMemory_
  AlignedVector<float> dense_;
  const std::vector<bool> factored_;
  const ps::Gradient gradient_;  // over dense_ and the model's last pass
};

}  // namespace pstrain::worker
