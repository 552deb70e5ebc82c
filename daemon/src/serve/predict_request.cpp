#include "pstrain/serve/predict_request.hpp"

#include <Poco/JSON/Parser.h>

#include <charconv>
#include <cstdio>
#include <optional>

#include "pstrain/model/layout.hpp"
#include "pstrain/serve/digit_image.hpp"
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
  Poco::Dynamic::Var parsed;
  try {
    parsed = Poco::JSON::Parser().parse(body);
  } catch (const Poco::Exception& e) {
    throw RequestError(400, "the body is neither JSON " + kShape + " nor a PNG image (" +
                                e.displayText() + ")");
  }
  auto object = parsed.type() == typeid(Poco::JSON::Object::Ptr)
                    ? parsed.extract<Poco::JSON::Object::Ptr>()
                    : nullptr;
  auto images = object ? object->getArray("images") : nullptr;
  if (!images) throw RequestError(400, "expected JSON " + kShape);
  if (images->size() == 0) throw RequestError(400, "\"images\" is empty: send at least one image");
  arma::fmat inputs(model::kMnistInputs, images->size());
  for (size_t i = 0; i < images->size(); ++i) {
    auto image = images->getArray(unsigned(i));
    const std::string which = "image " + std::to_string(i);
    if (!image) throw RequestError(400, which + " is not an array of 784 values 0-255");
    if (image->size() != size_t(model::kMnistInputs)) {
      throw RequestError(400, which + " has " + std::to_string(image->size()) +
                                  " values; expected 784 (28x28)");
    }
    float* column = inputs.colptr(arma::uword(i));
    for (size_t p = 0; p < image->size(); ++p) {
      const auto& value = image->get(unsigned(p));
      double v = value.isNumeric() ? value.convert<double>() : -1;
      if (!value.isNumeric() || !(v >= 0 && v <= 255)) {
        throw RequestError(400, which + ", value " + std::to_string(p) + ": " +
                                    value.toString() + " is not a number from 0 to 255");
      }
      column[p] = float(v / 255.0);
    }
  }
  return inputs;
}

}  // namespace

arma::fmat parsePredictBody(const std::string& body, const std::string& contentType) {
  if (contentType.rfind("image/", 0) == 0 && contentType.rfind("image/png", 0) != 0) {
    throw RequestError(415, contentType + " is not supported: send a PNG image or JSON " + kShape);
  }
  if (!looksLikePng(body)) return inputsOfJson(body);
  std::vector<float> digit = digitFromPng(body);
  arma::fmat inputs(model::kMnistInputs, 1);
  for (size_t p = 0; p < digit.size(); ++p) inputs(arma::uword(p), 0) = digit[p] / 255.f;
  return inputs;
}

std::string predictionJson(const arma::fmat& probs) {
  std::string predictions;
  std::string values;
  char number[32];
  for (arma::uword col = 0; col < probs.n_cols; ++col) {
    const char* sep = col ? "," : "";
    predictions += sep + std::to_string(probs.col(col).index_max());
    values += sep + std::string("[");
    for (arma::uword row = 0; row < probs.n_rows; ++row) {
      std::snprintf(number, sizeof number, "%s%.6g", row ? "," : "", double(probs(row, col)));
      values += number;
    }
    values += "]";
  }
  return "{\"predictions\":[" + predictions + "],\"probabilities\":[" + values + "]}";
}

}  // namespace pstrain::serve
