#pragma once

#include <string>
#include <vector>

#include "pstrain/model/layout.hpp"

namespace pstrain::model {

// A trained MLP: its layer sizes and its flat parameters.
struct Model {
  Layout layout;
  std::vector<float> params;
};

// Serialises a trained model: "PSTRAINM", the layer count and sizes (uint32), then the flat
// float32 parameters, all little-endian.
std::string serializeModel(const Layout& layout, const std::vector<float>& params);

// The inverse of serializeModel, for an MNIST model (784 inputs, 10 classes); throws DataError
// naming `source` and what is wrong.
Model parseModel(const std::string& bytes, const std::string& source);

// Reads and parses a model file; throws DataError when it is missing or malformed.
Model readModelFile(const std::string& path);

}  // namespace pstrain::model
