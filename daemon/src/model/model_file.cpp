#include "pstrain/model/model_file.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>

#include "pstrain/common/error.hpp"

#include "pstrain/common/bytes.hpp"

namespace pstrain::model {
namespace {

const std::string kMagic = "PSTRAINM";
constexpr std::uint32_t kMaxLayers = 64;
constexpr std::uint32_t kMaxLayerSize = 1 << 16;

}  // namespace

std::string serializeModel(const Layout& layout, const std::vector<float>& params) {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  out.putText(kMagic).put(std::uint32_t(layout.sizes().size()));
  for (int size : layout.sizes()) out.put(std::uint32_t(size));
  out.putFloats(params.data(), params.size());
  return std::string(bytes.begin(), bytes.end());
}

Model parseModel(const std::string& bytes, const std::string& source) {
  auto fail = [&](const std::string& what) {
    return DataError(source + ": not a pstrain model file: " + what);
  };
  if (bytes.compare(0, kMagic.size(), kMagic) != 0) throw fail("it does not start with PSTRAINM");
  ByteReader in(reinterpret_cast<const std::uint8_t*>(bytes.data()) + kMagic.size(),
                bytes.size() - kMagic.size());
  auto readU32 = [&](const char* what) {
    try {
      return in.get<std::uint32_t>();
    } catch (const DecodeError&) {
      throw fail(std::string("truncated in the ") + what);
    }
  };
  std::uint32_t count = readU32("layer count");
  if (count < 2 || count > kMaxLayers) {
    throw fail(std::to_string(count) + " layers (expected 2 to " + std::to_string(kMaxLayers) + ")");
  }
  std::vector<int> sizes;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t size = readU32("layer sizes");
    if (size == 0 || size > kMaxLayerSize) throw fail("layer size " + std::to_string(size));
    sizes.push_back(int(size));
  }
  if (sizes.front() != kMnistInputs || sizes.back() != kMnistClasses) {
    throw fail(std::to_string(sizes.front()) + " inputs and " + std::to_string(sizes.back()) +
               " classes (expected " + std::to_string(kMnistInputs) + " and " +
               std::to_string(kMnistClasses) + ")");
  }
  Layout layout = Layout::mnist(std::vector<int>(sizes.begin() + 1, sizes.end() - 1));
  const size_t expected = layout.parameterCount() * sizeof(float);
  const size_t held = bytes.size() - kMagic.size() - (count + 1) * sizeof(std::uint32_t);
  if (held != expected) {
    throw fail(std::to_string(held) + " bytes of parameters (expected " +
               std::to_string(expected) + ")");
  }
  std::vector<float> params(layout.parameterCount());
  in.getFloats(params.data(), params.size());
  return Model{std::move(layout), std::move(params)};
}

Model readModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot open the model file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parseModel(bytes.str(), path);
}

}  // namespace pstrain::model
