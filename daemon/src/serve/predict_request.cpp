#include "pstrain/serve/predict_request.hpp"

#include <Poco/String.h>

#include <charconv>
#include <cstdio>
#include <optional>
#include <string_view>

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
  ImageInputs inputs;
  do {
    if (!take("[")) return std::nullopt;
    for (int p = 0; p < model::kMnistInputs; ++p) {
      if (p > 0 && !take(",")) return std::nullopt;
      skipSpace();
      double v = -1;
      auto [next, error] = std::from_chars(at, end, v);
      if (error != std::errc() || !(v >= 0 && v <= 255)) return std::nullopt;
      at = next;
      inputs.add(v);
    }
    if (!take("]")) return std::nullopt;
  } while (take(","));
  if (!take("]") || !take("}")) return std::nullopt;
  skipSpace();
  if (at != end) return std::nullopt;
  return inputs.matrix();
}

// `declared`: the client said JSON, so a body that is not is not taken for a bad PNG either.
arma::fmat inputsOfJson(const std::string& body, bool declared) {
  if (auto inputs = scanImages(body)) return *inputs;
  JsonValue parsed;
  try {
    parsed = parseJson(body);
  } catch (const RequestError& e) {
    throw RequestError(400, std::string(declared ? "the body is not JSON " + kShape
                                                 : "the body is neither JSON " + kShape +
                                                       " nor a PNG image") +
                                " (" + e.what() + ")");
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

std::string mediaType(const std::string& contentType) {
  return Poco::toLower(Poco::trim(contentType.substr(0, contentType.find(';'))));
}

std::string sniffedImageType(const std::string& body) {
  auto startsWith = [&body](std::string_view magic, size_t at = 0) {
    return body.size() >= at + magic.size() &&
           std::string_view(body).substr(at, magic.size()) == magic;
  };
  if (looksLikePng(body)) return "image/png";
  if (startsWith("\xff\xd8\xff")) return "image/jpeg";
  if (startsWith("GIF87a") || startsWith("GIF89a")) return "image/gif";
  if (startsWith("RIFF") && startsWith("WEBP", 8)) return "image/webp";
  return "";
}

std::string contentTypeOf(const std::string& contentType, const std::string& body) {
  if (declaredBody(contentType) != BodyType::kUndeclared) return contentType;
  const std::string sniffed = sniffedImageType(body);
  return sniffed.empty() ? contentType : sniffed;
}

BodyType declaredBody(const std::string& contentType) {
  const std::string type = mediaType(contentType);
  if (type == "application/json") return BodyType::kJson;
  if (type == "image/png") return BodyType::kPng;
  if (type.rfind("image/", 0) == 0) return BodyType::kOther;
  if (type.rfind("multipart/", 0) == 0) {
    throw RequestError(415, type +
                                " is not read here: send the file itself, e.g. curl "
                                "--data-binary @digit.png -H 'Content-Type: image/png' (or "
                                "@images.json with application/json)");
  }
  return BodyType::kUndeclared;
}

arma::fmat parsePredictBody(const std::string& body, const std::string& contentType,
                            data::PictureKind pictures) {
  const std::string type = contentTypeOf(contentType, body);
  const BodyType declared = declaredBody(type);
  if (declared == BodyType::kOther) {
    throw RequestError(415, mediaType(type) + " is not supported: send a PNG image or JSON " +
                                kShape);
  }
  // A declared type is taken at its word: a PNG sent as JSON is bad JSON, not a picture.
  if (declared != BodyType::kPng) return inputsOfJson(body, declared == BodyType::kJson);
  ImageInputs inputs;
  inputs.addImage(inputFromPng(body, pictures));
  return inputs.matrix();
}

}  // namespace pstrain::serve
