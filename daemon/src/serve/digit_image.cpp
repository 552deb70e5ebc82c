#include "pstrain/serve/digit_image.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "pstrain/model/layout.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

constexpr int kSide = 28;
constexpr int kBox = 20;      // MNIST fits each digit's bounding box into 20x20
constexpr float kInk = 32.f;  // ink darker than this (after inversion) is background noise

// Ink (0 none .. 255 full) of a grayscale image, inverted when the background is light: the
// border's mean brightness says which way round it is.
std::vector<float> inkOf(const std::vector<std::uint8_t>& gray, int width, int height) {
  double border = 0;
  long count = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (y == 0 || x == 0 || y == height - 1 || x == width - 1) {
        border += gray[size_t(y) * size_t(width) + size_t(x)];
        ++count;
      }
    }
  }
  const bool light = border / double(count) > 127.5;
  std::vector<float> ink(gray.size());
  for (size_t i = 0; i < gray.size(); ++i) ink[i] = light ? 255.f - gray[i] : float(gray[i]);
  return ink;
}

// The mean of `ink` over the source rectangle [x0,x1) x [y0,y1) (fractional bounds): area
// averaging, which shrinks without aliasing and enlarges as nearest-neighbour blocks.
float areaMean(const std::vector<float>& ink, int width, double x0, double y0, double x1,
               double y1) {
  double sum = 0;
  double area = 0;
  for (int y = int(std::floor(y0)); y < int(std::ceil(y1)); ++y) {
    double h = std::min(y1, y + 1.0) - std::max(y0, double(y));
    for (int x = int(std::floor(x0)); x < int(std::ceil(x1)); ++x) {
      double w = std::min(x1, x + 1.0) - std::max(x0, double(x));
      sum += w * h * ink[size_t(y) * size_t(width) + size_t(x)];
      area += w * h;
    }
  }
  return area > 0 ? float(sum / area) : 0.f;
}

}  // namespace

bool looksLikePng(const std::string& bytes) {
  return bytes.size() >= 8 &&
         png_sig_cmp(reinterpret_cast<png_const_bytep>(bytes.data()), 0, 8) == 0;
}

std::vector<float> digitFromGray(const std::vector<std::uint8_t>& gray, int width, int height) {
  std::vector<float> ink = inkOf(gray, width, height);
  int left = width, right = -1, top = height, bottom = -1;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (ink[size_t(y) * size_t(width) + size_t(x)] > kInk) {
        left = std::min(left, x), right = std::max(right, x);
        top = std::min(top, y), bottom = std::max(bottom, y);
      }
    }
  }
  std::vector<float> digit(size_t(kSide * kSide), 0.f);
  if (right < 0) return digit;  // no ink: a blank image

  // The bounding box, scaled so its longer side is 20 pixels.
  const int boxW = right - left + 1, boxH = bottom - top + 1;
  const double scale = double(kBox) / std::max(boxW, boxH);
  const int outW = std::max(1, int(std::lround(boxW * scale)));
  const int outH = std::max(1, int(std::lround(boxH * scale)));
  std::vector<float> box(size_t(outW) * size_t(outH));
  double mass = 0, massX = 0, massY = 0;
  for (int y = 0; y < outH; ++y) {
    for (int x = 0; x < outW; ++x) {
      float v = areaMean(ink, width, left + x * double(boxW) / outW, top + y * double(boxH) / outH,
                         left + (x + 1) * double(boxW) / outW, top + (y + 1) * double(boxH) / outH);
      box[size_t(y) * size_t(outW) + size_t(x)] = v;
      mass += v, massX += v * (x + 0.5), massY += v * (y + 0.5);
    }
  }
  // Shift so the centre of mass lands on the centre of the 28x28 field.
  const int shiftX = int(std::lround(kSide / 2.0 - massX / mass));
  const int shiftY = int(std::lround(kSide / 2.0 - massY / mass));
  for (int y = 0; y < outH; ++y) {
    for (int x = 0; x < outW; ++x) {
      int tx = x + shiftX, ty = y + shiftY;
      if (tx >= 0 && tx < kSide && ty >= 0 && ty < kSide) {
        digit[size_t(ty * kSide + tx)] = std::clamp(box[size_t(y) * size_t(outW) + size_t(x)], 0.f, 255.f);
      }
    }
  }
  return digit;
}

std::vector<float> digitFromPng(const std::string& bytes) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  auto refuse = [&](int status, const std::string& message) {
    png_image_free(&image);
    return RequestError(status, message);
  };
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    throw refuse(400, std::string("not a valid PNG image: ") + image.message);
  }
  const std::uint64_t pixels = std::uint64_t(image.width) * image.height;
  if (pixels > kMaxImagePixels) {
    throw refuse(413, "image of " + std::to_string(image.width) + "x" +
                          std::to_string(image.height) + " pixels is over the limit of " +
                          std::to_string(kMaxImagePixels) + " pixels");
  }
  // Gray, composited on white where the image is transparent (a drawing on a clear canvas).
  image.format = PNG_FORMAT_GRAY;
  std::vector<std::uint8_t> gray(static_cast<size_t>(pixels));
  png_color white{255, 255, 255};
  if (!png_image_finish_read(&image, &white, gray.data(), 0, nullptr)) {
    throw refuse(400, std::string("not a valid PNG image: ") + image.message);
  }
  return digitFromGray(gray, int(image.width), int(image.height));
}

}  // namespace pstrain::serve
