#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::serve {

// The largest image /predict decodes, in pixels (width x height), checked from the PNG header
// before decoding: a small file that would inflate to gigabytes (a decompression bomb) is refused.
constexpr std::uint64_t kMaxImagePixels = 2048 * 2048;

bool looksLikePng(const std::string& bytes);

// A PNG of any size and colour type as an MNIST digit: 784 values 0-255, white ink on black.
// Throws RequestError (400 not a PNG image, 413 too many pixels).
std::vector<float> digitFromPng(const std::string& bytes);

// A grayscale image (0 black .. 255 white, row by row) made into a digit the way MNIST's were:
// inverted when its background is light, the ink's bounding box scaled to fit 20x20 keeping its
// aspect, placed in 28x28 with its centre of mass at the centre.
std::vector<float> digitFromGray(const std::vector<std::uint8_t>& gray, int width, int height);

}  // namespace pstrain::serve
