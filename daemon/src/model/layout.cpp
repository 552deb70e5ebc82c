#include "pstrain/model/layout.hpp"

#include <cmath>
#include <random>

namespace pstrain::model {

Layout::Layout(int inputs, std::vector<int> hidden, int classes) {
  sizes_.push_back(inputs);
  sizes_.insert(sizes_.end(), hidden.begin(), hidden.end());
  sizes_.push_back(classes);
  offsets_.push_back(0);
  for (size_t layer = 0; layer + 1 < sizes_.size(); ++layer) {
    auto in = size_t(sizes_[layer]);
    auto out = size_t(sizes_[layer + 1]);
    offsets_.push_back(offsets_.back() + out * in + out);
  }
}

std::vector<float> initialParameters(const Layout& layout, std::uint64_t seed) {
  std::vector<float> params(layout.parameterCount(), 0.0f);
  std::mt19937_64 generator(seed);
  for (size_t layer = 0; layer < layout.layerCount(); ++layer) {
    auto in = layout.sizes()[layer];
    auto out = layout.sizes()[layer + 1];
    float* weights = params.data() + layout.weightOffset(layer);
    size_t count = size_t(in) * size_t(out);
    if (layer + 1 < layout.layerCount()) {
      std::normal_distribution<float> he(0.0f, std::sqrt(2.0f / float(in)));
      for (size_t i = 0; i < count; ++i) weights[i] = he(generator);
    } else {
      float limit = std::sqrt(6.0f / float(in + out));
      std::uniform_real_distribution<float> glorot(-limit, limit);
      for (size_t i = 0; i < count; ++i) weights[i] = glorot(generator);
    }
  }
  return params;
}

}  // namespace pstrain::model
