#include "pstrain/serve/predict_request.hpp"

#include <charconv>
#include <cstdio>
#include <optional>

#include "pstrain/model/layout.hpp"
#include "pstrain/serve/image_inputs.hpp"
#include "pstrain/serve/json_value.hpp"
#include "pstrain/serve/picture.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

const std::string kShape = "{\"images\": [[784 values 0-255], ...]}";

// The usual body, {"images": [[v, ...], ...]} with every image valid, read straight into the
// inputs: building Poco's JSON tree costs about a microsecond a value, 1 s for 1000 images.
// Anything else gives nullopt and goes through the JSON parser, which says what is wrong.
std::optional<arma::fmat> scanImages(const std::string& body) {
  const char* at = body.data();
  const char* const end = at + body.size();
  auto skipSpace = [&] {
    while (at < end && (*at == ' ' || *at == '\n' || *at == '\r' || *at == '\t')) ++at;
  };
  auto take = [&](std::string_view token) {
    skipSpace();
    if (size_t(end - at) < token.size() || std::string_view(at, token.size()) != token) return false;
    at += token.size();
    return true;
  };
  if (!take("{") || !take("\"images\"") || !take(":") || !take("[")) return std::nullopt;
  std::vector<float> values;
  do {
    if (!take("[")) return std::nullopt;
    for (int p = 0; p < model::kMnistInputs; ++p) {
      if (p > 0 && !take(",")) return std::nullopt;
      skipSpace();
      double v = -1;
      auto [next, error] = std::from_chars(at, end, v);
      if (error != std::errc() || !(v >= 0 && v <= 255)) return std::nullopt;
      at = next;
      values.push_back(float(v / 255.0));
    }
    if (!take("]")) return std::nullopt;
  } while (take(","));
  if (!take("]") || !take("}")) return std::nullopt;
  skipSpace();
  if (at != end) return std::nullopt;
  return arma::fmat(values.data(), model::kMnistInputs, values.size() / model::kMnistInputs);
}

arma::fmat inputsOfJson(const std::string& body) {
  if (auto inputs = scanImages(body)) return *inputs;
  JsonValue parsed;
  try {
    parsed = parseJson(body);
  } catch (const RequestError& e) {
    throw RequestError(
        400, "the body is neither JSON " + kShape + " nor a PNG image (" + e.what() + ")");
  }
  const JsonValue* images = parsed.isObject() ? parsed.find("images") : nullptr;
  if (!images || !images->isArray()) throw RequestError(400, "expected JSON " + kShape);
  if (images->size() == 0) throw RequestError(400, "\"images\" is empty: send at least one image");
  ImageInputs inputs;
  // An array of numbers is one image written flat, not a list of images.
  if (!images->numbers().empty())
    throw RequestError(400, "image 0 is not an array of 784 values 0-255 (28x28)");
  for (const auto& image : images->items()) inputs.addImage(image);
  return inputs.matrix();
}

}  // namespace

arma::fmat parsePredictBody(const std::string& body, const std::string& contentType,
                            data::PictureKind pictures) {
  if (contentType.rfind("image/", 0) == 0 && contentType.rfind("image/png", 0) != 0) {
    throw RequestError(415, contentType + " is not supported: send a PNG image or JSON " + kShape);
  }
  if (!looksLikePng(body)) return inputsOfJson(body);
  ImageInputs inputs;
  inputs.addImage(inputFromPng(body, pictures));
  return inputs.matrix();
}

}  // namespace pstrain::serve
