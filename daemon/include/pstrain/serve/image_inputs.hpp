#pragma once

#include <armadillo>
#include <vector>

#include "pstrain/serve/json_value.hpp"

namespace pstrain::serve {

// Model inputs gathered from pixel values 0-255 (an image is 784 of them, row by row), each
// checked as it comes: a RequestError 400 names the image and the value.
class ImageInputs {
 public:
  // `wholeNumbers`: the values must be integers (a UINT8 tensor).
  explicit ImageInputs(bool wholeNumbers = false) : wholeNumbers_(wholeNumbers) {}

  // The values of `value`, a number or arrays of them nested any way, in row-major order.
  void addValues(const JsonValue& value);
  // One image: `value` holds 784 values, flat or as 28 rows.
  void addImage(const JsonValue& value);
  // One image of 784 values already checked (a decoded PNG).
  void addImage(const std::vector<float>& pixels);

  size_t valueCount() const { return values_.size(); }
  size_t imageCount() const;
  // 784 rows in [0, 1], a column per image.
  arma::fmat matrix() const;

 private:
  void add(double value);
  [[noreturn]] void refuse(const std::string& what) const;

  bool wholeNumbers_;
  std::vector<float> values_;
};

}  // namespace pstrain::serve
