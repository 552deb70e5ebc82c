#define BOOST_TEST_MODULE push_encoding
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "pstrain/common/error.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "support/process_run.hpp"

// A push whose weight gradients travel as factors must give every ps the same dense gradient as
// a dense push, whichever way the shards cut the layers.

using namespace pstrain;
using pstrain::testing::contains;

namespace {

// A model's gradient of a batch both ways: dense, and with the factored layers left as factors.
struct TwoGradients {
  model::Layout layout;
  model::Mlp mlp;
  arma::fmat inputs;
  std::vector<float> dense;     // every value
  std::vector<float> partial;   // factored layers' weights never written (NaN)
  std::vector<bool> factored;

  TwoGradients(model::Layout modelLayout, size_t batch)
      : layout(modelLayout), mlp(layout), dense(layout.parameterCount()),
        partial(layout.parameterCount(), std::nanf("")),
        factored(ps::factoredLayers(layout, batch)) {
    arma::arma_rng::set_seed(5);
    inputs = arma::randu<arma::fmat>(arma::uword(layout.sizes()[0]), arma::uword(batch));
    std::vector<std::uint8_t> labels(batch);
    for (size_t i = 0; i < batch; ++i) labels[i] = std::uint8_t(i % size_t(layout.sizes().back()));
    auto params = model::initialParameters(layout, 3);
    mlp.lossAndGradient(params.data(), inputs, labels.data(), dense.data());
    mlp.lossAndGradient(params.data(), inputs, labels.data(), partial.data(), factored);
  }

  ps::Gradient gradient() const { return ps::gradientOf(mlp, inputs, partial.data(), factored); }
};

// Encodes for every shard of `shards`, decodes as the ps would, and compares with the dense
// gradient; returns the values sent in all.
size_t roundTrip(const TwoGradients& two, int shards) {
  auto gradient = two.gradient();
  size_t sent = 0;
  for (int index = 0; index < shards; ++index) {
    auto range = ps::shardRange(two.layout.parameterCount(), shards, index);
    ps::PushEncoding worker(two.layout, range, gradient.batch);
    ps::PushEncoding server(two.layout, range, gradient.batch);
    BOOST_TEST(worker.valueCount() == server.valueCount());
    BOOST_TEST(worker.valueCount() <= range.count);
    std::vector<float> values(worker.valueCount());
    worker.encode(gradient, values.data());
    std::vector<float> decoded(range.count);
    server.decode(values.data(), decoded.data());
    for (size_t i = 0; i < range.count; ++i) {
      const float expected = two.dense[range.offset + i];
      BOOST_TEST_REQUIRE(std::abs(decoded[i] - expected) <= 1e-6f + 1e-5f * std::abs(expected),
                         "shard " << index << " of " << shards << ", parameter "
                                  << range.offset + i << ": " << decoded[i] << " != " << expected);
    }
    sent += values.size();
  }
  return sent;
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_batches_factor_the_wide_layers_only) {
  auto layout = model::Layout::mnist({128});
  BOOST_TEST(ps::factorsLayer(layout, 0, 10));
  BOOST_TEST(ps::factorsLayer(layout, 0, 27));
  BOOST_TEST(!ps::factorsLayer(layout, 0, 28));   // factors over a quarter of the matrix
  BOOST_TEST(!ps::factorsLayer(layout, 0, 100));
  BOOST_TEST(ps::factorsLayer(layout, 1, 2));     // 128 x 10: 138 factors an example
  BOOST_TEST(!ps::factorsLayer(layout, 1, 10));
  BOOST_TEST(!ps::factorsLayer(layout, 0, 0));
}

BOOST_AUTO_TEST_CASE(one_ps_receives_a_ninth_of_the_values_at_batch_10) {
  TwoGradients two(model::Layout::mnist({128}), 10);
  const size_t sent = roundTrip(two, 1);
  // The first layer as 128 x 10 + 784 x 10 factors; its bias and the output layer dense.
  BOOST_TEST(sent == 128u * 10 + 784 * 10 + 128 + 128 * 10 + 10);
  BOOST_TEST(sent * 9 < two.layout.parameterCount());
}

BOOST_AUTO_TEST_CASE(shards_that_cut_columns_get_the_dense_gradient) {
  // Shard boundaries fall inside matrix columns, some shards hold a factored layer's last
  // columns and the next layer, and with 40 shards some parts are too small to factor.
  TwoGradients two(model::Layout(300, {50, 40}, 10), 3);
  BOOST_TEST(two.factored[0]);
  BOOST_TEST(two.factored[1]);
  BOOST_TEST(!two.factored[2]);
  for (int shards : {1, 2, 3, 7, 40}) roundTrip(two, shards);
  ps::PushEncoding tiny(two.layout, ps::shardRange(two.layout.parameterCount(), 40, 5), 3);
  BOOST_TEST(!tiny.dense());
}

BOOST_AUTO_TEST_CASE(large_batches_push_dense_values) {
  TwoGradients two(model::Layout::mnist({128}), 100);
  auto gradient = two.gradient();
  BOOST_TEST(gradient.batch == 0u);
  for (int shards : {1, 3}) {
    auto range = ps::shardRange(two.layout.parameterCount(), shards, shards - 1);
    ps::PushEncoding encoding(two.layout, range, gradient.batch);
    BOOST_TEST(encoding.dense());
    BOOST_TEST(encoding.valueCount() == range.count);
  }
  roundTrip(two, 3);
}

BOOST_AUTO_TEST_CASE(a_push_of_the_wrong_count_is_refused_saying_what_it_carries) {
  const auto layout = model::Layout::mnist({16});
  ps::PushEncoding encoding(layout, ps::shardRange(layout.parameterCount(), 2, 1), 0);
  encoding.expectValues(encoding.valueCount());
  try {
    encoding.expectValues(10);
    BOOST_FAIL("a push of 10 values was accepted");
  } catch (const ProtocolError& e) {
    BOOST_TEST(contains(e.what(), "carries 10 values, not " +
                                      std::to_string(encoding.valueCount())),
               e.what());
  }
}
