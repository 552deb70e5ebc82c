#pragma once

#include <armadillo>
#include <cstddef>
#include <vector>

#include "pstrain/model/layout.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// A worker's gradient for one push. The gradient of a layer's weights over a batch is
// delta * input^T (delta: out x batch, the loss's derivative by the layer's pre-activations;
// input: in x batch), so for a small batch its two factors are far fewer values than the
// out x in matrix: 912 x 10 against 128 x 784 for Fashion-MNIST's first layer at batch 10.
// Sending the factors and letting the ps multiply them out (Poseidon's sufficient factors) is
// the same gradient with a tenth of the traffic. `batch` > 0 says which layers are factored
// (factorsLayer); their weights are not in `dense`.
struct Gradient {
  explicit Gradient(const float* denseValues) : dense(denseValues) {}

  const float* dense;                     // every parameter's gradient, but factored weights
  size_t batch = 0;                       // examples behind the factors; 0: all dense
  std::vector<const arma::fmat*> deltas;  // per layer: out x batch, for factored layers
  std::vector<const arma::fmat*> inputs;  // per layer: in x batch, for factored layers
};

// Whether a push of a batch of `batch` examples carries `layer`'s weight gradient as factors:
// when they are at most a quarter of the matrix. The ps multiplies them out, so beyond that
// its extra work (2 * out * in * batch flops) buys little traffic.
bool factorsLayer(const model::Layout& layout, size_t layer, size_t batch);
// factorsLayer() of every layer: what Mlp::lossAndGradient() is to leave as factors.
std::vector<bool> factoredLayers(const model::Layout& layout, size_t batch);

// The push of the model's last pass over `inputs` (Mlp::lossAndGradient with `factored`): the
// dense values, and the factored layers' delta and input, valid until the model's next pass.
Gradient gradientOf(const model::Mlp& mlp, const arma::fmat& inputs, const float* dense,
                    const std::vector<bool>& factored);

// The float values of a push to the ps that owns `range`, for a batch of `batch` (0: dense):
// in parameter order, the shard's values, except where the shard covers a factored layer's
// weights and their factors are fewer values than its part of the matrix. There the values are
// the layer's delta (out x batch), then for each matrix column the shard touches the batch's
// inputs to it (batch x columns, column-major: the ps multiplies ranges of it out in place).
// Worker and ps build the same encoding, so the frame says only the batch, and the ps refuses
// a push whose value count is not the encoding's.
class PushEncoding {
 public:
  PushEncoding(const model::Layout& layout, ShardRange range, size_t batch);

  size_t batch() const { return batch_; }
  size_t valueCount() const { return valueCount_; }
  // The shard's values go as they are: the dense gradient's slice can be sent without a copy.
  bool dense() const { return dense_; }

  // Worker: the values to send (valueCount()) from the gradient.
  void encode(const Gradient& gradient, float* values) const;
  // Ps: throws ProtocolError unless a push carries `count` values, before they are read.
  void expectValues(size_t count) const;
  // Ps: the shard's dense gradient (range.count floats) from the values received.
  void decode(const float* values, float* gradient) const;

 private:
  struct Segment {
    size_t begin, end;  // the parameters it covers, in the flat vector
    int layer;          // a factored layer's weights, or -1: values as they are
    bool sendFactors;   // the factors go on the wire (else the values, multiplied out)
    size_t firstColumn, columns;  // of the layer's weight matrix that the segment touches
    size_t values;      // on the wire
  };

  model::Layout layout_;
  ShardRange range_;
  size_t batch_;
  std::vector<Segment> segments_;
  size_t valueCount_ = 0;
  bool dense_ = true;
};

}  // namespace pstrain::ps
