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
const std::string kDataSetTag = "DATASET";
constexpr std::uint32_t kMaxTextBytes = 1024;  // a data set's or a class's name

void putText(ByteWriter& out, const std::string& text) {
  out.put(std::uint32_t(text.size())).putText(text);
}

// The data set section after the parameters; throws DecodeError saying what is wrong.
data::DataSetInfo readDataSet(ByteReader& in) {
  if (in.getText(kDataSetTag.size()) != kDataSetTag)
    throw DecodeError("no " + kDataSetTag + " tag");
  data::DataSetInfo info;
  const auto pictures = in.get<std::uint8_t>();
  if (pictures > std::uint8_t(data::PictureKind::kDigit)) {
    throw DecodeError("unknown picture kind " + std::to_string(pictures));
  }
  info.pictures = data::PictureKind(pictures);
  auto text = [&] {
    const auto length = in.get<std::uint32_t>();
    if (length > kMaxTextBytes) throw DecodeError("a name of " + std::to_string(length) + " bytes");
    return in.getText(length);
  };
  info.name = text();
  for (int label = 0; label < kMnistClasses; ++label) info.classes.push_back(text());
  in.expectEnd();
  return info;
}

}  // namespace

std::string serializeModel(const Model& model) {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  out.putText(kMagic).put(std::uint32_t(model.layout.sizes().size()));
  for (int size : model.layout.sizes()) out.put(std::uint32_t(size));
  out.putFloats(model.params.data(), model.params.size());
  out.putText(kDataSetTag).put(std::uint8_t(model.dataSet.pictures));
  putText(out, model.dataSet.name);
  for (const auto& name : model.dataSet.classes) putText(out, name);
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
  if (held < expected) {
    throw fail(std::to_string(held) + " bytes of parameters (expected " +
               std::to_string(expected) + ")");
  }
  std::vector<float> params(layout.parameterCount());
  in.getFloats(params.data(), params.size());
  if (in.atEnd()) {
    return Model{std::move(layout), std::move(params), data::unknownDataSet(kMnistClasses)};
  }
  try {
    return Model{std::move(layout), std::move(params), readDataSet(in)};
  } catch (const DecodeError& e) {
    throw fail(std::string("after the parameters: ") + e.what());
  }
}

Model readModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot open the model file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parseModel(bytes.str(), path);
}

}  // namespace pstrain::model
