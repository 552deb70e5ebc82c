#include "pstrain/model/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pstrain::model {
namespace {

// Views of the flat parameter (or gradient) vector; no copies.
arma::fmat weightsOf(const Layout& layout, const float* flat, size_t layer) {
  return arma::fmat(const_cast<float*>(flat) + layout.weightOffset(layer),
                    arma::uword(layout.sizes()[layer + 1]), arma::uword(layout.sizes()[layer]),
                    false, true);
}

arma::fvec biasOf(const Layout& layout, const float* flat, size_t layer) {
  return arma::fvec(const_cast<float*>(flat) + layout.biasOffset(layer),
                    arma::uword(layout.sizes()[layer + 1]), false, true);
}

}  // namespace

Mlp::Mlp(Layout layout)
    : layout_(std::move(layout)),
      activations_(layout_.layerCount()),
      deltas_(layout_.layerCount()) {}

void Mlp::forward(const float* params, const arma::fmat& inputs) {
  for (size_t layer = 0; layer < layout_.layerCount(); ++layer) {
    const arma::fmat& in = layer == 0 ? inputs : activations_[layer - 1];
    arma::fmat& out = activations_[layer];
    out = weightsOf(layout_, params, layer) * in;
    out.each_col() += biasOf(layout_, params, layer);
    if (layer + 1 < layout_.layerCount()) {
      out.transform([](float v) { return v > 0.0f ? v : 0.0f; });
    }
  }
}

void Mlp::softmax() {
  arma::fmat& probs = activations_.back();
  for (arma::uword col = 0; col < probs.n_cols; ++col) {
    float* column = probs.colptr(col);
    float top = *std::max_element(column, column + probs.n_rows);
    float sum = 0.0f;
    for (arma::uword row = 0; row < probs.n_rows; ++row) {
      column[row] = std::exp(column[row] - top);
      sum += column[row];
    }
    for (arma::uword row = 0; row < probs.n_rows; ++row) column[row] /= sum;
  }
}

float Mlp::softmaxCrossEntropy(const std::uint8_t* labels) {
  softmax();
  const arma::fmat& probs = activations_.back();
  double total = 0.0;
  for (arma::uword col = 0; col < probs.n_cols; ++col) {
    total -= std::log(std::max(probs(labels[col], col), 1e-30f));
  }
  return float(total / double(probs.n_cols));
}

const arma::fmat& Mlp::probabilities(const float* params, const arma::fmat& inputs) {
  forward(params, inputs);
  softmax();
  return activations_.back();
}

float Mlp::loss(const float* params, const arma::fmat& inputs, const std::uint8_t* labels) {
  forward(params, inputs);
  return softmaxCrossEntropy(labels);
}

float Mlp::lossAndGradient(const float* params, const arma::fmat& inputs,
                           const std::uint8_t* labels, float* gradient,
                           const std::vector<bool>& factored) {
  float meanLoss = loss(params, inputs, labels);
  const float scale = 1.0f / float(inputs.n_cols);

  // d(loss)/d(logits) = (probabilities - one_hot(label)) / batch
  size_t last = layout_.layerCount() - 1;
  deltas_[last] = activations_[last];
  for (arma::uword col = 0; col < inputs.n_cols; ++col) deltas_[last](labels[col], col) -= 1.0f;
  deltas_[last] *= scale;

  for (size_t layer = last + 1; layer-- > 0;) {
    const arma::fmat& in = layer == 0 ? inputs : activations_[layer - 1];
    if (layer >= factored.size() || !factored[layer]) {
      arma::fmat weightGrad = weightsOf(layout_, gradient, layer);
      weightGrad = deltas_[layer] * in.t();
    }
    arma::fvec biasGrad = biasOf(layout_, gradient, layer);
    biasGrad = arma::sum(deltas_[layer], 1);
    if (layer > 0) {
      deltas_[layer - 1] = weightsOf(layout_, params, layer).t() * deltas_[layer];
      // ReLU passes the gradient only where its output was positive. A select, not a branch:
      // about half the units are off, in no pattern a branch predictor could learn.
      const float* __restrict act = activations_[layer - 1].memptr();
      float* __restrict delta = deltas_[layer - 1].memptr();
      for (arma::uword i = 0; i < deltas_[layer - 1].n_elem; ++i) {
        delta[i] = act[i] > 0.0f ? delta[i] : 0.0f;
      }
    }
  }
  return meanLoss;
}

size_t Mlp::countCorrect(const float* params, const arma::fmat& inputs,
                         const std::uint8_t* labels) {
  forward(params, inputs);
  const arma::fmat& logits = activations_.back();
  size_t correct = 0;
  for (arma::uword col = 0; col < logits.n_cols; ++col) {
    if (logits.col(col).index_max() == labels[col]) ++correct;
  }
  return correct;
}

void gatherInputs(const std::uint8_t* pixels, size_t imageSize, const std::uint32_t* indices,
                  size_t count, arma::fmat& inputs) {
  inputs.set_size(arma::uword(imageSize), arma::uword(count));
  constexpr float kScale = 1.0f / 255.0f;
  // The examples are picked at random from megabytes of pixels, so each image is a cache miss:
  // the image kPrefetchAhead columns on is requested while this one is converted.
  constexpr size_t kPrefetchAhead = 4;
  constexpr size_t kCacheLine = 64;
  for (size_t col = 0; col < count; ++col) {
    if (col + kPrefetchAhead < count) {
      const std::uint8_t* ahead = pixels + size_t(indices[col + kPrefetchAhead]) * imageSize;
      for (size_t at = 0; at < imageSize; at += kCacheLine) __builtin_prefetch(ahead + at);
    }
    const std::uint8_t* __restrict image = pixels + size_t(indices[col]) * imageSize;
    float* __restrict column = inputs.colptr(arma::uword(col));
    for (size_t i = 0; i < imageSize; ++i) column[i] = float(image[i]) * kScale;
  }
}

double accuracy(Mlp& mlp, const float* params, const std::uint8_t* pixels,
                const std::uint8_t* labels, size_t count) {
  constexpr size_t kChunk = 1000;
  auto imageSize = size_t(mlp.layout().sizes().front());
  std::vector<std::uint32_t> indices(std::min(count, kChunk));
  arma::fmat inputs;
  size_t correct = 0;
  for (size_t start = 0; start < count; start += kChunk) {
    size_t n = std::min(kChunk, count - start);
    std::iota(indices.begin(), indices.begin() + long(n), std::uint32_t(start));
    gatherInputs(pixels, imageSize, indices.data(), n, inputs);
    correct += mlp.countCorrect(params, inputs, labels + start);
  }
  return count == 0 ? 0.0 : double(correct) / double(count);
}

}  // namespace pstrain::model
