#pragma once

#include <string>
#include <vector>

#include "pstrain/data/data_set.hpp"
#include "pstrain/model/layout.hpp"

namespace pstrain::model {

// A trained MLP: its layer sizes, its flat parameters and the data set it learnt.
struct Model {
  Layout layout;
  std::vector<float> params;
  data::DataSetInfo dataSet;
};

// Serialises a trained model: "PSTRAINM", the layer count and sizes (uint32), the flat float32
// parameters, then "DATASET" + its picture kind (uint8), name and class names (each a uint32
// length and UTF-8 bytes), all little-endian. Files written before the data set was recorded end
// after the parameters, and read as data::unknownDataSet.
std::string serializeModel(const Model& model);

// The inverse of serializeModel, for an MNIST model (784 inputs, 10 classes); throws DataError
// naming `source` and what is wrong.
Model parseModel(const std::string& bytes, const std::string& source);

// Reads and parses a model file; throws DataError when it is missing or malformed.
Model readModelFile(const std::string& path);

}  // namespace pstrain::model
