#include "pstrain/worker/batch_gradient.hpp"

#include <algorithm>

namespace pstrain::worker {

BatchGradient::BatchGradient(const model::Layout& layout, const data::Examples& train,
                             size_t batchSize, bool factor)
    : train_(train),
      mlp_(layout),
      labels_(batchSize),
      inputMemory_(train.imageSize() * batchSize),
      inputs_(inputMemory_.data(), arma::uword(train.imageSize()), arma::uword(batchSize), false,
              true),
      dense_(layout.parameterCount()),
      factored_(factor ? ps::factoredLayers(layout, batchSize)
                       : std::vector<bool>(layout.layerCount(), false)),
      gradient_(ps::gradientOf(mlp_, inputs_, dense_.data(), factored_)) {}

float BatchGradient::compute(const float* params, const std::uint32_t* batch) {
  model::gatherInputs(train_.pixels.data(), train_.imageSize(), batch, labels_.size(), inputs_);
  for (size_t i = 0; i < labels_.size(); ++i) labels_[i] = train_.labels[batch[i]];
  return mlp_.lossAndGradient(params, inputs_, labels_.data(), dense_.data(), factored_);
}

long BatchGradient::factoredLayers() const {
  return long(std::count(factored_.begin(), factored_.end(), true));
}

}  // namespace pstrain::worker
