#pragma once

#include <armadillo>
#include <string>

#include "pstrain/data/data_set.hpp"

namespace pstrain::serve {

// The largest request body read, in bytes (about 2,500 images as JSON): a longer one is
// refused with 413 before it is read.
constexpr size_t kMaxBodyBytes = 8 << 20;

// The images of a /predict body as model inputs (784 rows in [0, 1], one column per image):
// JSON {"images": [[784 values 0-255], ...]}, or a PNG image made into an input as the model's
// data set's pictures were (`pictures`). Throws RequestError with the status and one line
// saying what is wrong.
arma::fmat parsePredictBody(const std::string& body, const std::string& contentType,
                            data::PictureKind pictures);

}  // namespace pstrain::serve
