#define BOOST_TEST_MODULE digit_image
#include <boost/test/unit_test.hpp>

#include "pstrain/common/error.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/serve/digit_image.hpp"
#include "pstrain/serve/predict_request.hpp"
#include "pstrain/serve/request_error.hpp"

// Images made into MNIST digits, and model files read back.

using pstrain::serve::digitFromGray;

namespace {

struct Moments {
  double mass = 0, x = 0, y = 0;
  int left = 28, right = -1, top = 28, bottom = -1;
};

Moments momentsOf(const std::vector<float>& digit) {
  Moments m;
  for (int y = 0; y < 28; ++y) {
    for (int x = 0; x < 28; ++x) {
      float v = digit[size_t(y * 28 + x)];
      m.mass += v, m.x += v * (x + 0.5), m.y += v * (y + 0.5);
      if (v > 0) {
        m.left = std::min(m.left, x), m.right = std::max(m.right, x);
        m.top = std::min(m.top, y), m.bottom = std::max(m.bottom, y);
      }
    }
  }
  m.x /= m.mass, m.y /= m.mass;
  return m;
}

// A white `width` x `height` page with a black rectangle [x0,x1) x [y0,y1).
std::vector<std::uint8_t> page(int width, int height, int x0, int y0, int x1, int y1) {
  std::vector<std::uint8_t> gray(size_t(width * height), 255);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) gray[size_t(y * width + x)] = 0;
  }
  return gray;
}

}  // namespace

BOOST_AUTO_TEST_CASE(dark_ink_on_light_paper_becomes_a_centred_20_pixel_digit) {
  // A tall bar off in a corner of a large page.
  auto digit = digitFromGray(page(300, 200, 10, 20, 40, 120), 300, 200);
  auto m = momentsOf(digit);
  BOOST_TEST(m.bottom - m.top + 1 == 20);          // the longer side fits 20 pixels
  BOOST_TEST(m.right - m.left + 1 == 6);           // keeping the aspect, 30:100
  BOOST_TEST(std::abs(m.x - 14) <= 0.5);           // centre of mass at the centre
  BOOST_TEST(std::abs(m.y - 14) <= 0.5);
  BOOST_TEST(*std::max_element(digit.begin(), digit.end()) == 255.f);  // ink is bright
  BOOST_TEST(digit[0] == 0.f);                     // background is black
}

BOOST_AUTO_TEST_CASE(light_ink_on_dark_paper_is_not_inverted) {
  auto paper = page(28, 28, 10, 4, 18, 24);
  for (auto& v : paper) v = std::uint8_t(255 - v);  // white ink on black, as MNIST
  auto m = momentsOf(digitFromGray(paper, 28, 28));
  BOOST_TEST(m.bottom - m.top + 1 == 20);
  BOOST_TEST(m.right - m.left + 1 == 8);
}

BOOST_AUTO_TEST_CASE(a_blank_page_is_a_blank_digit) {
  auto digit = digitFromGray(std::vector<std::uint8_t>(50 * 50, 255), 50, 50);
  BOOST_TEST(std::all_of(digit.begin(), digit.end(), [](float v) { return v == 0.f; }));
}

BOOST_AUTO_TEST_CASE(json_images_become_input_columns_whatever_the_spacing) {
  std::string image;
  for (int i = 0; i < 784; ++i) image += (i ? " , " : "") + std::to_string(i % 256);
  // The compact form and a spaced one with a fractional value read the same way.
  auto inputs = pstrain::serve::parsePredictBody(
      "{ \"images\" : [ [" + image + "] ,\n[" + image + "] ] }", "application/json");
  BOOST_TEST(inputs.n_rows == 784u);
  BOOST_TEST(inputs.n_cols == 2u);
  BOOST_TEST(inputs(255, 1) == 1.0f);
  BOOST_TEST(inputs(1, 0) == 1.0f / 255.0f);
  auto fractional = pstrain::serve::parsePredictBody(
      "{\"images\":[[127.5" + image.substr(image.find(',') - 1) + "]]}", "application/json");
  BOOST_TEST(fractional(0, 0) == 0.5f);
}

BOOST_AUTO_TEST_CASE(model_files_read_back_and_bad_ones_are_refused) {
  auto layout = pstrain::model::Layout::mnist({16});
  std::vector<float> params(layout.parameterCount());
  for (size_t i = 0; i < params.size(); ++i) params[i] = float(i) * 0.5f;
  const auto bytes = pstrain::model::serializeModel(layout, params);
  auto model = pstrain::model::parseModel(bytes, "m.bin");
  BOOST_TEST(model.layout.sizes() == layout.sizes());
  BOOST_TEST(model.params == params);

  auto refused = [](const std::string& bad, const std::string& why) {
    try {
      pstrain::model::parseModel(bad, "m.bin");
      BOOST_ERROR("accepted: " << why);
    } catch (const pstrain::DataError& e) {
      BOOST_TEST(std::string(e.what()).find("m.bin: not a pstrain model file: " + why) == 0,
                 e.what());
    }
  };
  refused("PNG\r\n", "it does not start with PSTRAINM");
  refused(bytes.substr(0, bytes.size() - 4), std::to_string(params.size() * 4 - 4) +
                                                 " bytes of parameters");
  refused(bytes.substr(0, 10), "truncated in the layer count");
  std::string tenInputs = bytes;
  tenInputs[12] = 10;  // the first layer's size, 784 -> 778
  refused(tenInputs, "778 inputs and 10 classes");
}
