#pragma once

#include <armadillo>
#include <optional>
#include <vector>

#include "pstrain/serve/json_value.hpp"

namespace pstrain::serve {

// The pixel values every route takes, as /model and the v2 metadata state them.
constexpr int kPixelMin = 0;
constexpr int kPixelMax = 255;

// Model inputs gathered from pixel values 0-255 (an image is 784 of them, row by row), each
// checked as it comes: a RequestError 400 names the image and the value. Every route's images
// come through here, so the rule against pixels scaled to 0-1 (matrix()) holds on each.
class ImageInputs {
 public:
  // `wholeNumbers`: the values must be integers (a UINT8 tensor).
  explicit ImageInputs(bool wholeNumbers = false) : wholeNumbers_(wholeNumbers) {}

  // The values of `value`, a number or arrays of them nested any way, in row-major order.
  void addValues(const JsonValue& value);
  // One image: `value` holds 784 values, flat or as 28 rows.
  void addImage(const JsonValue& value);
  // One image of 784 values 0-255 made by this server (a decoded PNG): not held to the 0-1
  // rule, since a faint drawing may well come out with every value below 1.
  void addImage(const std::vector<float>& pixels);
  // One value.
  void add(double value);

  size_t valueCount() const { return values_.size(); }
  size_t imageCount() const;
  // 784 rows in [0, 1], a column per image. Throws RequestError 400 when an image looks scaled
  // to 0-1: every value within [0, 1] and at least one fractional.
  arma::fmat matrix() const;

 private:
  [[noreturn]] void refuse(const std::string& what) const;

  bool wholeNumbers_;
  std::vector<float> values_;
  // The image being added: its largest value and whether any value has a fraction.
  double imageMax_ = 0;
  bool imageFractional_ = false;
  std::optional<size_t> unitScaled_;  // the first image that looks scaled to 0-1
};

}  // namespace pstrain::serve
