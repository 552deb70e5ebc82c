#pragma once

#include <armadillo>
#include <cstdint>
#include <vector>

#include "pstrain/model/layout.hpp"

namespace pstrain::model {

// Forward and backward passes of an MLP (ReLU hidden layers, softmax cross-entropy) on float32.
// Parameters and gradients are flat vectors laid out by Layout; the object only holds the
// per-batch workspace, reused from step to step so that training allocates nothing.
class Mlp {
 public:
  explicit Mlp(Layout layout);

  const Layout& layout() const { return layout_; }

  // Mean cross-entropy of the batch (inputs: one column per example, labels 0..classes-1);
  // writes d(loss)/d(params) into `gradient` (parameterCount() floats), except the weights of
  // each layer marked in `factored`: their gradient is delta(layer) * input^T, left as those
  // factors (the layer's input is `inputs` for layer 0, else activation(layer - 1)).
  float lossAndGradient(const float* params, const arma::fmat& inputs, const std::uint8_t* labels,
                        float* gradient, const std::vector<bool>& factored = {});

  // Of the last pass, valid until the next one: d(loss)/d(pre-activations) of a layer
  // (out x batch), and a layer's output (after ReLU for hidden layers).
  const arma::fmat& delta(size_t layer) const { return deltas_[layer]; }
  const arma::fmat& activation(size_t layer) const { return activations_[layer]; }

  // Mean cross-entropy of the batch without gradients.
  float loss(const float* params, const arma::fmat& inputs, const std::uint8_t* labels);

  // Number of examples whose most probable class is their label.
  size_t countCorrect(const float* params, const arma::fmat& inputs, const std::uint8_t* labels);

  // The class probabilities of each example (one column of classes per input column); valid
  // until the next call.
  const arma::fmat& probabilities(const float* params, const arma::fmat& inputs);

 private:
  void forward(const float* params, const arma::fmat& inputs);
  // Turns the last layer's logits into probabilities, column by column.
  void softmax();
  // softmax(), then the mean cross-entropy against `labels`.
  float softmaxCrossEntropy(const std::uint8_t* labels);

  Layout layout_;
  std::vector<arma::fmat> activations_;  // [l] = output of layer l (last: logits, then probs)
  std::vector<arma::fmat> deltas_;       // [l] = d(loss)/d(pre-activation of layer l)
};

// Fills `inputs` (one column per example) with pixels scaled to [0, 1], taking the examples
// at `indices` from `pixels` (examples of `imageSize` bytes each, back to back).
void gatherInputs(const std::uint8_t* pixels, size_t imageSize, const std::uint32_t* indices,
                  size_t count, arma::fmat& inputs);

// Fraction of `count` examples classified correctly, evaluated in chunks.
double accuracy(Mlp& mlp, const float* params, const std::uint8_t* pixels,
                const std::uint8_t* labels, size_t count);

}  // namespace pstrain::model
