#define BOOST_TEST_MODULE mlp
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "pstrain/model/mlp.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/ps/optimizer.hpp"

using namespace pstrain::model;

namespace {

arma::fmat randomInputs(int rows, int cols, unsigned seed) {
  arma::arma_rng::set_seed(seed);
  return arma::randu<arma::fmat>(arma::uword(rows), arma::uword(cols));
}

}  // namespace

BOOST_AUTO_TEST_CASE(layout_places_every_tensor_back_to_back) {
  Layout layout(784, {128}, 10);
  BOOST_TEST(layout.parameterCount() == 784u * 128 + 128 + 128 * 10 + 10);
  BOOST_TEST(layout.weightOffset(0) == 0u);
  BOOST_TEST(layout.biasOffset(0) == 784u * 128);
  BOOST_TEST(layout.weightOffset(1) == 784u * 128 + 128);
  Layout deep(784, {256, 256}, 10);
  BOOST_TEST(deep.layerCount() == 3u);
  BOOST_TEST(deep.parameterCount() == 784u * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
}

BOOST_AUTO_TEST_CASE(initial_parameters_are_seeded_and_biases_zero) {
  Layout layout(784, {64}, 10);
  auto a = initialParameters(layout, 7);
  auto b = initialParameters(layout, 7);
  auto c = initialParameters(layout, 8);
  BOOST_TEST(a == b);
  BOOST_TEST(a != c);
  for (size_t i = layout.biasOffset(0); i < layout.weightOffset(1); ++i) BOOST_TEST(a[i] == 0.0f);
  // He initialisation: the first layer's weights have variance near 2 / fan-in.
  double sumSquares = 0;
  for (size_t i = 0; i < layout.biasOffset(0); ++i) sumSquares += double(a[i]) * a[i];
  double variance = sumSquares / double(layout.biasOffset(0));
  BOOST_TEST(std::abs(variance - 2.0 / 784) < 0.1 * 2.0 / 784);
}

BOOST_AUTO_TEST_CASE(gradient_matches_finite_differences) {
  Layout layout(12, {9, 7}, 5);
  Mlp mlp(layout);
  auto params = initialParameters(layout, 3);
  for (size_t i = 0; i < params.size(); ++i) params[i] += 0.01f * float(i % 7);  // nonzero biases
  auto inputs = randomInputs(12, 6, 11);
  std::vector<std::uint8_t> labels{0, 1, 2, 3, 4, 1};
  std::vector<float> gradient(params.size());
  mlp.lossAndGradient(params.data(), inputs, labels.data(), gradient.data());

  // Central differences in double-checked float: compare every parameter.
  const float epsilon = 1e-2f;
  double worst = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    auto plus = params;
    auto minus = params;
    plus[i] += epsilon;
    minus[i] -= epsilon;
    double numeric = (double(mlp.loss(plus.data(), inputs, labels.data())) -
                      double(mlp.loss(minus.data(), inputs, labels.data()))) /
                     (2.0 * epsilon);
    double error = std::abs(numeric - gradient[i]) / std::max(1e-2, std::abs(numeric) + std::abs(gradient[i]));
    worst = std::max(worst, error);
  }
  BOOST_TEST(worst < 0.05, "worst relative gradient error " << worst);
}

BOOST_AUTO_TEST_CASE(loss_of_uniform_prediction_is_log_classes) {
  Layout layout(4, {3}, 10);
  Mlp mlp(layout);
  std::vector<float> zeros(layout.parameterCount(), 0.0f);
  auto inputs = randomInputs(4, 5, 1);
  std::vector<std::uint8_t> labels{0, 3, 9, 2, 2};
  BOOST_TEST(std::abs(mlp.loss(zeros.data(), inputs, labels.data()) - std::log(10.0f)) < 1e-5);
}

BOOST_AUTO_TEST_CASE(training_steps_reduce_the_loss_and_learn_the_labels) {
  Layout layout(8, {16}, 3);
  Mlp mlp(layout);
  auto params = initialParameters(layout, 5);
  auto inputs = randomInputs(8, 30, 2);
  std::vector<std::uint8_t> labels(30);
  for (arma::uword i = 0; i < 30; ++i) labels[i] = inputs(0, i) > 0.5f ? 1 : (inputs(1, i) > 0.5f ? 2 : 0);
  std::vector<float> gradient(params.size());
  pstrain::ps::Adam adam(params.size(), 0.05f);
  float first = mlp.lossAndGradient(params.data(), inputs, labels.data(), gradient.data());
  for (int step = 0; step < 300; ++step) {
    mlp.lossAndGradient(params.data(), inputs, labels.data(), gradient.data());
    adam.apply(params.data(), gradient.data(), params.size());
  }
  float last = mlp.loss(params.data(), inputs, labels.data());
  BOOST_TEST(last < first * 0.2f);
  BOOST_TEST(mlp.countCorrect(params.data(), inputs, labels.data()) >= 28u);
}

BOOST_AUTO_TEST_CASE(gather_scales_pixels_to_unit_range) {
  std::vector<std::uint8_t> pixels{0, 255, 51, 102, 204, 0};
  std::uint32_t indices[] = {2, 0};
  arma::fmat inputs;
  gatherInputs(pixels.data(), 2, indices, 2, inputs);
  BOOST_TEST(inputs.n_rows == 2u);
  BOOST_TEST(inputs.n_cols == 2u);
  BOOST_TEST(std::abs(inputs(0, 0) - 0.8f) < 1e-6);
  BOOST_TEST(inputs(1, 1) == 1.0f);
}

BOOST_AUTO_TEST_CASE(model_file_holds_magic_layer_sizes_and_parameters) {
  Layout layout = Layout::mnist({16});
  std::vector<float> params(layout.parameterCount());
  for (size_t i = 0; i < params.size(); ++i) params[i] = float(i) * 0.5f;
  const std::string bytes =
      serializeModel({layout, params, pstrain::data::unknownDataSet(kMnistClasses)});
  const size_t header = 8 + 4 * (1 + layout.sizes().size());
  BOOST_REQUIRE(bytes.size() > header + 4 * params.size());
  BOOST_TEST(bytes.substr(header + 4 * params.size(), 7) == "DATASET");
  BOOST_TEST(bytes.substr(0, 8) == "PSTRAINM");
  std::uint32_t count = 0;
  std::memcpy(&count, bytes.data() + 8, 4);
  BOOST_TEST(count == layout.sizes().size());
  for (size_t i = 0; i < count; ++i) {
    std::uint32_t size = 0;
    std::memcpy(&size, bytes.data() + 12 + 4 * i, 4);
    BOOST_TEST(int(size) == layout.sizes()[i]);
  }
  std::vector<float> read(params.size());
  std::memcpy(read.data(), bytes.data() + header, 4 * read.size());
  BOOST_TEST(read == params, boost::test_tools::per_element());
}
