#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pstrain/data/data_set.hpp"

namespace pstrain::serve {

// The largest image /predict decodes, in pixels (width x height), checked from the PNG header
// before decoding: a small file that would inflate to gigabytes (a decompression bomb) is refused.
constexpr std::uint64_t kMaxImagePixels = 2048 * 2048;

bool looksLikePng(const std::string& bytes);

// A PNG of any size and colour type made into one input (784 values 0-255, light on dark) the
// way the data set's pictures were made: digitFromGray or imageFromGray. Throws RequestError
// (400 not a PNG image, 413 too many pixels).
std::vector<float> inputFromPng(const std::string& bytes, data::PictureKind kind);

// A grayscale image (0 black .. 255 white, row by row) made into a digit the way MNIST's were:
// inverted when its background is light, the ink's bounding box scaled to fit 20x20 keeping its
// aspect, placed in 28x28 with its centre of mass at the centre.
std::vector<float> digitFromGray(const std::vector<std::uint8_t>& gray, int width, int height);

// A grayscale image made into a 28x28 picture as Fashion-MNIST's were: inverted when its
// background is light, the whole image scaled to fit 28x28 keeping its aspect, centred. A 28x28
// image of the data set itself stays as it is.
std::vector<float> imageFromGray(const std::vector<std::uint8_t>& gray, int width, int height);

}  // namespace pstrain::serve
