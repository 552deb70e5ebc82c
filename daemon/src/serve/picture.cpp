#include "pstrain/serve/picture.hpp"

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

// A rectangle of an image, scaled.
struct Scaled {
  int width = 0, height = 0;
  std::vector<float> values;  // row by row
};

// The rectangle [left, left + w) x [top, top + h) of `ink` (rows of `stride` values) scaled so
// its longer side is `side` pixels, keeping its aspect.
Scaled scaleRegion(const std::vector<float>& ink, int stride, int left, int top, int w, int h,
                   int side) {
  const double scale = double(side) / std::max(w, h);
  Scaled out;
  out.width = std::max(1, int(std::lround(w * scale)));
  out.height = std::max(1, int(std::lround(h * scale)));
  out.values.resize(size_t(out.width) * size_t(out.height));
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      out.values[size_t(y) * size_t(out.width) + size_t(x)] =
          areaMean(ink, stride, left + x * double(w) / out.width, top + y * double(h) / out.height,
                   left + (x + 1) * double(w) / out.width, top + (y + 1) * double(h) / out.height);
    }
  }
  return out;
}

// `scaled` placed in a 28x28 field with its top left at (left, top), clipped to the field.
std::vector<float> place(const Scaled& scaled, int left, int top) {
  std::vector<float> field(size_t(kSide * kSide), 0.f);
  for (int y = 0; y < scaled.height; ++y) {
    for (int x = 0; x < scaled.width; ++x) {
      const int tx = x + left, ty = y + top;
      if (tx < 0 || tx >= kSide || ty < 0 || ty >= kSide) continue;
      field[size_t(ty * kSide + tx)] =
          std::clamp(scaled.values[size_t(y) * size_t(scaled.width) + size_t(x)], 0.f, 255.f);
    }
  }
  return field;
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
  if (right < 0) return std::vector<float>(size_t(kSide * kSide), 0.f);  // no ink: a blank image

  // The ink's bounding box, scaled to fit 20x20, then shifted so that its centre of mass lands
  // on the centre of the 28x28 field.
  Scaled box = scaleRegion(ink, width, left, top, right - left + 1, bottom - top + 1, kBox);
  double mass = 0, massX = 0, massY = 0;
  for (int y = 0; y < box.height; ++y) {
    for (int x = 0; x < box.width; ++x) {
      const float v = box.values[size_t(y) * size_t(box.width) + size_t(x)];
      mass += v, massX += v * (x + 0.5), massY += v * (y + 0.5);
    }
  }
  return place(box, int(std::lround(kSide / 2.0 - massX / mass)),
               int(std::lround(kSide / 2.0 - massY / mass)));
}

std::vector<float> imageFromGray(const std::vector<std::uint8_t>& gray, int width, int height) {
  Scaled image = scaleRegion(inkOf(gray, width, height), width, 0, 0, width, height, kSide);
  return place(image, (kSide - image.width) / 2, (kSide - image.height) / 2);
}

std::vector<float> inputFromPng(const std::string& bytes, data::PictureKind kind) {
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
  const int width = int(image.width), height = int(image.height);
  return kind == data::PictureKind::kDigit ? digitFromGray(gray, width, height)
                                           : imageFromGray(gray, width, height);
}

}  // namespace pstrain::serve
