#include "pstrain/serve/image_inputs.hpp"

#include <algorithm>
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
  if (!(value >= kPixelMin && value <= kPixelMax) ||
      (wholeNumbers_ && value != std::floor(value))) {
    refuse(JsonValue::number(value).describe());
  }
  imageMax_ = std::max(imageMax_, value);
  imageFractional_ = imageFractional_ || value != std::floor(value);
  values_.push_back(float(value / kPixelMax));
  if (values_.size() % kImageValues != 0) return;
  // An image just ended. Pixels a client scaled to 0-1 (as many pipelines feed their own model)
  // read here as a nearly black picture, classified with confidence and wrongly: refused
  // instead. The rule needs a fraction as well as every value within [0, 1], because an
  // all-black 0-255 image (or one of 0s and 1s) is within [0, 1] too and is a picture all the
  // same; a 0/1 image cannot be told from one, so it is taken as 0-255.
  if (imageMax_ <= 1 && imageFractional_ && !unitScaled_) unitScaled_ = imageCount() - 1;
  imageMax_ = 0;
  imageFractional_ = false;
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
  for (float v : pixels) values_.push_back(float(v / 255.0));
}

size_t ImageInputs::imageCount() const { return values_.size() / kImageValues; }

arma::fmat ImageInputs::matrix() const {
  if (unitScaled_) {
    throw RequestError(400, "image " + std::to_string(*unitScaled_) +
                                " looks scaled to 0-1 (every value within [0, 1], some "
                                "fractional): send pixel values 0-255, e.g. multiplied by 255");
  }
  return arma::fmat(values_.data(), kImageValues, imageCount());
}

}  // namespace pstrain::serve
