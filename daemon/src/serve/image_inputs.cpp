#include "pstrain/serve/image_inputs.hpp"

#include <cmath>

#include "pstrain/model/layout.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

constexpr size_t kImageValues = model::kMnistInputs;

}  // namespace

void ImageInputs::refuse(const std::string& what) const {
  throw RequestError(400, "image " + std::to_string(values_.size() / kImageValues) + ", value " +
                              std::to_string(values_.size() % kImageValues) + ": " + what +
                              " is not " + (wholeNumbers_ ? "an integer" : "a number") +
                              " from 0 to 255");
}

void ImageInputs::add(double value) {
  if (!(value >= 0 && value <= 255) || (wholeNumbers_ && value != std::floor(value))) {
    refuse(JsonValue::number(value).describe());
  }
  values_.push_back(float(value / 255.0));
}

void ImageInputs::addValues(const JsonValue& value) {
  if (value.type() == JsonValue::Type::kNumber) return add(value.asNumber());
  if (!value.isArray()) refuse(value.describe());
  for (double number : value.numbers()) add(number);
  for (const auto& item : value.items()) addValues(item);
}

void ImageInputs::addImage(const JsonValue& value) {
  const size_t image = imageCount();
  if (!value.isArray()) {
    throw RequestError(
        400, "image " + std::to_string(image) + " is not an array of 784 values 0-255 (28x28)");
  }
  const size_t before = values_.size();
  addValues(value);
  if (values_.size() - before != kImageValues) {
    throw RequestError(400, "image " + std::to_string(image) + " has " +
                                std::to_string(values_.size() - before) +
                                " values; expected 784 (28x28)");
  }
}

void ImageInputs::addImage(const std::vector<float>& pixels) {
  for (float v : pixels) add(v);
}

size_t ImageInputs::imageCount() const { return values_.size() / kImageValues; }

arma::fmat ImageInputs::matrix() const {
  return arma::fmat(values_.data(), kImageValues, imageCount());
}

}  // namespace pstrain::serve
