#include "pstrain/ps/push_encoding.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "pstrain/common/error.hpp"

namespace pstrain::ps {
namespace {

// Elements [from, to) of a weight gradient delta * input^T (column-major, delta.n_rows rows),
// where column j of `inputsT` (batch x columns) holds the batch's inputs to matrix column
// firstColumn + j. Column ranges of inputsT are contiguous: the products read them in place.
void multiplyOut(const arma::fmat& delta, const arma::fmat& inputsT, size_t firstColumn,
                 size_t from, size_t to, float* out) {
  const size_t rows = delta.n_rows;
  while (from < to) {
    const size_t column = from / rows;
    const size_t columnStart = column * rows;
    const auto j = arma::uword(column - firstColumn);
    if (from == columnStart && to - from >= rows) {
      // Whole columns: one product straight into place.
      const size_t columns = (to - from) / rows;
      arma::fmat whole(out, arma::uword(rows), arma::uword(columns), false, true);
      whole = delta * inputsT.cols(j, j + arma::uword(columns) - 1);
      from += columns * rows;
      out += columns * rows;
    } else {
      // A column the range cuts: computed whole, copied in part.
      arma::fvec full = delta * inputsT.col(j);
      const size_t end = std::min(to, columnStart + rows);
      std::copy(full.begin() + long(from - columnStart), full.begin() + long(end - columnStart),
                out);
      out += end - from;
      from = end;
    }
  }
}

}  // namespace

bool factorsLayer(const model::Layout& layout, size_t layer, size_t batch) {
  const auto in = size_t(layout.sizes()[layer]);
  const auto out = size_t(layout.sizes()[layer + 1]);
  return batch > 0 && 4 * batch * (in + out) <= in * out;
}

std::vector<bool> factoredLayers(const model::Layout& layout, size_t batch) {
  std::vector<bool> factored(layout.layerCount());
  for (size_t layer = 0; layer < factored.size(); ++layer) {
    factored[layer] = factorsLayer(layout, layer, batch);
  }
  return factored;
}

Gradient gradientOf(const model::Mlp& mlp, const arma::fmat& inputs, const float* dense,
                    const std::vector<bool>& factored) {
  Gradient gradient(dense);
  for (size_t layer = 0; layer < factored.size(); ++layer) {
    gradient.deltas.push_back(factored[layer] ? &mlp.delta(layer) : nullptr);
    gradient.inputs.push_back(!factored[layer] ? nullptr
                              : layer == 0     ? &inputs
                                               : &mlp.activation(layer - 1));
    if (factored[layer]) gradient.batch = inputs.n_cols;
  }
  return gradient;
}

PushEncoding::PushEncoding(const model::Layout& layout, ShardRange range, size_t batch)
    : layout_(layout), range_(range), batch_(batch) {
  const size_t shardEnd = range.offset + range.count;
  auto addValues = [&](size_t begin, size_t end) {
    begin = std::max(begin, range.offset);
    end = std::min(end, shardEnd);
    if (begin >= end) return;
    if (!segments_.empty() && segments_.back().layer < 0 && segments_.back().end == begin) {
      segments_.back().end = end;
      segments_.back().values += end - begin;
    } else {
      segments_.push_back(Segment{begin, end, -1, false, 0, 0, end - begin});
    }
  };
  for (size_t layer = 0; layer < layout.layerCount(); ++layer) {
    const size_t weights = layout.weightOffset(layer);
    const size_t bias = layout.biasOffset(layer);
    if (!factorsLayer(layout, layer, batch)) {
      addValues(weights, bias);
    } else if (std::max(weights, range.offset) < std::min(bias, shardEnd)) {
      const size_t begin = std::max(weights, range.offset);
      const size_t end = std::min(bias, shardEnd);
      const size_t rows = size_t(layout.sizes()[layer + 1]);
      const size_t firstColumn = (begin - weights) / rows;
      const size_t columns = (end - 1 - weights) / rows - firstColumn + 1;
      const size_t factors = batch * (rows + columns);
      const bool sendFactors = factors < end - begin;
      segments_.push_back(Segment{begin, end, int(layer), sendFactors, firstColumn, columns,
                                  sendFactors ? factors : end - begin});
      dense_ = false;
    }
    addValues(bias, layout.weightOffset(layer + 1));
  }
  for (const auto& segment : segments_) valueCount_ += segment.values;
}

void PushEncoding::encode(const Gradient& gradient, float* values) const {
  for (const auto& segment : segments_) {
    if (segment.layer < 0) {
      std::memcpy(values, gradient.dense + segment.begin,
                  (segment.end - segment.begin) * sizeof(float));
    } else {
      const auto& delta = *gradient.deltas[size_t(segment.layer)];
      const auto firstRow = arma::uword(segment.firstColumn);
      const auto lastRow = arma::uword(segment.firstColumn + segment.columns - 1);
      const auto& input = *gradient.inputs[size_t(segment.layer)];
      if (segment.sendFactors) {
        std::memcpy(values, delta.memptr(), delta.n_elem * sizeof(float));
        arma::fmat inputsT(values + delta.n_elem, input.n_cols, arma::uword(segment.columns),
                           false, true);
        inputsT = input.rows(firstRow, lastRow).t();
      } else {
        const size_t weights = layout_.weightOffset(size_t(segment.layer));
        const arma::fmat inputsT = input.rows(firstRow, lastRow).t();
        multiplyOut(delta, inputsT, segment.firstColumn, segment.begin - weights,
                    segment.end - weights, values);
      }
    }
    values += segment.values;
  }
}

void PushEncoding::expectValues(size_t count) const {
  if (count != valueCount_) {
    throw ProtocolError("a push of batch " + std::to_string(batch_) + " to parameters [" +
                        std::to_string(range_.offset) + ", " +
                        std::to_string(range_.offset + range_.count) + ") carries " +
                        std::to_string(count) + " values, not " + std::to_string(valueCount_));
  }
}

void PushEncoding::decode(const float* values, float* gradient) const {
  for (const auto& segment : segments_) {
    float* out = gradient + (segment.begin - range_.offset);
    if (segment.layer >= 0 && segment.sendFactors) {
      const size_t layer = size_t(segment.layer);
      const auto rows = arma::uword(layout_.sizes()[layer + 1]);
      const auto batch = arma::uword(batch_);
      const arma::fmat delta(const_cast<float*>(values), rows, batch, false, true);
      const arma::fmat inputsT(const_cast<float*>(values) + delta.n_elem, batch,
                               arma::uword(segment.columns), false, true);
      const size_t weights = layout_.weightOffset(layer);
      multiplyOut(delta, inputsT, segment.firstColumn, segment.begin - weights,
                  segment.end - weights, out);
    } else {
      std::memcpy(out, values, segment.values * sizeof(float));
    }
    values += segment.values;
  }
}

}  // namespace pstrain::ps
