#pragma once

#include <string>
#include <vector>

#include "pstrain/model/layout.hpp"

namespace pstrain::model {

// Serialises a trained model: "PSTRAINM", the layer count and sizes (uint32), then the flat
// float32 parameters, all little-endian.
std::string serializeModel(const Layout& layout, const std::vector<float>& params);

}  // namespace pstrain::model
