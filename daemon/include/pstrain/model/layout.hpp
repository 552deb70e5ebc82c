#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pstrain::model {

constexpr int kMnistInputs = 28 * 28;
constexpr int kMnistClasses = 10;

// The sizes of an MLP's layers and where each weight matrix and bias vector lies in the one flat
// parameter vector (weights column-major, out x in, then the bias). The flat vector is what the
// ps shards split between them, so any slice boundary may cut through a tensor.
class Layout {
 public:
  // inputs -> hidden... (ReLU) -> classes
  Layout(int inputs, std::vector<int> hidden, int classes);
  static Layout mnist(const std::vector<int>& hidden) {
    return Layout(kMnistInputs, hidden, kMnistClasses);
  }

  const std::vector<int>& sizes() const { return sizes_; }
  size_t layerCount() const { return sizes_.size() - 1; }
  size_t parameterCount() const { return offsets_.back(); }
  size_t weightOffset(size_t layer) const { return offsets_[layer]; }
  size_t biasOffset(size_t layer) const {
    return offsets_[layer] + size_t(sizes_[layer + 1]) * size_t(sizes_[layer]);
  }

 private:
  std::vector<int> sizes_;
  std::vector<size_t> offsets_;  // start of each layer's weights; last entry = total
};

// He-normal weights for ReLU layers, Glorot-uniform for the output layer, zero biases;
// the same seed gives the same vector in every process.
std::vector<float> initialParameters(const Layout& layout, std::uint64_t seed);

}  // namespace pstrain::model
