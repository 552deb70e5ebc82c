#include "pstrain/model/model_file.hpp"

#include <cstdint>

namespace pstrain::model {
namespace {
void appendU32(std::string& out, std::uint32_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
}  // namespace

std::string serializeModel(const Layout& layout, const std::vector<float>& params) {
  std::string out = "PSTRAINM";
  appendU32(out, std::uint32_t(layout.sizes().size()));
  for (int size : layout.sizes()) appendU32(out, std::uint32_t(size));
  out.append(reinterpret_cast<const char*>(params.data()), params.size() * sizeof(float));
  return out;
}

}  // namespace pstrain::model
