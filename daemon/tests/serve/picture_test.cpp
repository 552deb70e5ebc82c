#define BOOST_TEST_MODULE picture
#include "pstrain/serve/http_reply.hpp"
#include "pstrain/serve/picture.hpp"

#include <boost/test/unit_test.hpp>
#include <functional>

#include "pstrain/common/error.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/serve/predict_request.hpp"
#include "pstrain/serve/request_error.hpp"

// Uploaded pictures made into inputs as the data set's were, /predict bodies read, and model
// files read back.

using pstrain::data::PictureKind;
using pstrain::serve::digitFromGray;
using pstrain::serve::imageFromGray;

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
  BOOST_TEST(m.bottom - m.top + 1 == 20);  // the longer side fits 20 pixels
  BOOST_TEST(m.right - m.left + 1 == 6);   // keeping the aspect, 30:100
  BOOST_TEST(std::abs(m.x - 14) <= 0.5);   // centre of mass at the centre
  BOOST_TEST(std::abs(m.y - 14) <= 0.5);
  BOOST_TEST(*std::max_element(digit.begin(), digit.end()) == 255.f);  // ink is bright
  BOOST_TEST(digit[0] == 0.f);                                         // background is black
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

BOOST_AUTO_TEST_CASE(an_image_of_the_data_set_stays_as_it_is) {
  std::vector<std::uint8_t> gray(28 * 28);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = std::uint8_t(i % 7 == 0 ? 0 : i % 200);
  gray[0] = 0;
  auto image = imageFromGray(gray, 28, 28);
  BOOST_TEST(std::equal(image.begin(), image.end(), gray.begin()));
}

BOOST_AUTO_TEST_CASE(a_photo_is_scaled_whole_into_28x28_not_centred_as_a_digit) {
  // A dark object on a light 100x50 photo: inverted, the whole photo scaled to 28x14 and
  // centred, the paper around the object kept (a digit's ink would fill a 20-pixel box).
  auto image = imageFromGray(page(100, 50, 10, 10, 50, 40), 100, 50);
  auto m = momentsOf(image);
  BOOST_TEST(m.top == 7 + 2);  // rows 10-40 of 50 at 0.28 pixels each, 7 rows below the top
  BOOST_TEST(m.bottom == 7 + 11);
  BOOST_TEST(m.left == 2);  // columns 10-50 of 100
  BOOST_TEST(m.right == 13);
  BOOST_TEST(image[size_t(12 * 28 + 5)] == 255.f);
}

BOOST_AUTO_TEST_CASE(a_null_or_a_string_pixel_is_refused_naming_it) {
  std::string rest;
  for (int i = 1; i < 784; ++i) rest += ",0";
  for (const auto& [value, shown] : std::vector<std::pair<std::string, std::string>>{
           {"null", "null"}, {"\"x\"", "\"x\""}, {"{}", "{...}"}, {"300", "300"}}) {
    try {
      pstrain::serve::parsePredictBody("{\"images\":[[" + value + rest + "]]}", "application/json",
                                       PictureKind::kImage);
      BOOST_ERROR("accepted " << value);
    } catch (const pstrain::serve::RequestError& e) {
      BOOST_TEST(e.status() == 400);
      BOOST_TEST(std::string(e.what()) ==
                 "image 0, value 0: " + shown + " is not a number from 0 to 255");
    }
  }
}

BOOST_AUTO_TEST_CASE(json_images_become_input_columns_whatever_the_spacing) {
  std::string image;
  for (int i = 0; i < 784; ++i) image += (i ? " , " : "") + std::to_string(i % 256);
  // The compact form and a spaced one with a fractional value read the same way.
  auto inputs =
      pstrain::serve::parsePredictBody("{ \"images\" : [ [" + image + "] ,\n[" + image + "] ] }",
                                       "application/json", PictureKind::kImage);
  BOOST_TEST(inputs.n_rows == 784u);
  BOOST_TEST(inputs.n_cols == 2u);
  BOOST_TEST(inputs(255, 1) == 1.0f);
  BOOST_TEST(inputs(1, 0) == 1.0f / 255.0f);
  auto fractional = pstrain::serve::parsePredictBody(
      "{\"images\":[[127.5" + image.substr(image.find(',') - 1) + "]]}", "application/json",
      PictureKind::kImage);
  BOOST_TEST(fractional(0, 0) == 0.5f);
}

BOOST_AUTO_TEST_CASE(an_image_scaled_to_0_1_is_refused_and_a_black_or_0_1_one_is_not) {
  auto body = [](const std::function<std::string(int)>& value) {
    std::string image;
    for (int i = 0; i < 784; ++i) image += (i ? "," : "") + value(i);
    return "{\"images\":[[" + image + "]]}";
  };
  auto parse = [](const std::string& json) {
    return pstrain::serve::parsePredictBody(json, "application/json", PictureKind::kImage);
  };
  for (const auto& scaled : {body([](int i) { return i == 5 ? "0.5" : "0"; }),
                             body([](int i) { return i % 2 ? "1" : "0.25"; })}) {
    try {
      parse(scaled);
      BOOST_ERROR("accepted an image scaled to 0-1");
    } catch (const pstrain::serve::RequestError& e) {
      BOOST_TEST(e.status() == 400);
      BOOST_TEST(std::string(e.what()).rfind("image 0 looks scaled to 0-1", 0) == 0, e.what());
    }
  }
  BOOST_TEST(parse(body([](int) { return "0"; })).max() == 0.f);  // all black
  BOOST_TEST(parse(body([](int i) { return i % 2 ? "1" : "0"; })).max() == 1.f / 255.f);
  // One value above 1 says the scale is 0-255, fractions and all.
  BOOST_TEST(parse(body([](int i) { return i == 0 ? "1.5" : "0.5"; }))(0, 0) == 1.5f / 255.f);
}

BOOST_AUTO_TEST_CASE(model_files_read_back_and_bad_ones_are_refused) {
  auto layout = pstrain::model::Layout::mnist({16});
  std::vector<float> params(layout.parameterCount());
  for (size_t i = 0; i < params.size(); ++i) params[i] = float(i) * 0.5f;
  const auto bytes = pstrain::model::serializeModel(
      {layout, params, pstrain::data::unknownDataSet(pstrain::model::kMnistClasses)});
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
  const size_t paramsEnd = 8 + 4 * (1 + layout.sizes().size()) + 4 * params.size();
  refused(bytes.substr(0, paramsEnd - 4),
          std::to_string(params.size() * 4 - 4) + " bytes of parameters");
  refused(bytes.substr(0, 10), "truncated in the layer count");
  std::string tenInputs = bytes;
  tenInputs[12] = 10;  // the first layer's size, 784 -> 778
  refused(tenInputs, "778 inputs and 10 classes");
}

BOOST_AUTO_TEST_CASE(model_files_keep_their_data_set_and_old_ones_still_read) {
  auto layout = pstrain::model::Layout::mnist({4});
  std::vector<float> params(layout.parameterCount(), 0.25f);
  pstrain::data::DataSetInfo fashion{"Fashion-MNIST", {}, PictureKind::kImage};
  for (int k = 0; k < 10; ++k) fashion.classes.push_back("class \"" + std::to_string(k) + "\"");
  const auto bytes = pstrain::model::serializeModel({layout, params, fashion});
  auto model = pstrain::model::parseModel(bytes, "m.bin");
  BOOST_TEST(model.dataSet.name == "Fashion-MNIST");
  BOOST_TEST(model.dataSet.classes == fashion.classes);
  BOOST_TEST(int(model.dataSet.pictures) == int(PictureKind::kImage));

  // A file written before the data set was recorded ends after the parameters.
  const size_t oldSize = 8 + 4 * (1 + layout.sizes().size()) + 4 * params.size();
  auto old = pstrain::model::parseModel(bytes.substr(0, oldSize), "old.bin");
  BOOST_TEST(old.params == params);
  BOOST_TEST(old.dataSet.name == "");
  BOOST_TEST(old.dataSet.classes.front() == "0");
  BOOST_TEST(old.dataSet.classes.back() == "9");

  for (size_t cut : {oldSize + 3, oldSize + 9, bytes.size() - 1}) {
    try {
      pstrain::model::parseModel(bytes.substr(0, cut), "m.bin");
      BOOST_ERROR("accepted a model file cut at " << cut);
    } catch (const pstrain::DataError& e) {
      BOOST_TEST(std::string(e.what()).find("m.bin: not a pstrain model file: after the "
                                            "parameters: ") == 0,
                 e.what());
    }
  }
}

BOOST_AUTO_TEST_CASE(json_strings_are_escaped_and_stay_valid_utf8) {
  using pstrain::serve::jsonString;
  BOOST_TEST(jsonString("a \"b\" \\ c\n") == "\"a \\\"b\\\" \\\\ c\\u000a\"");
  BOOST_TEST(jsonString("T-shirt/top, Größe") == "\"T-shirt/top, Größe\"");
  BOOST_TEST(jsonString("byte '\xff'") == "\"byte '\\ufffd'\"");  // quoted from a bad body
}
