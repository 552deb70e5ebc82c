#define BOOST_TEST_MODULE shard
#include <boost/test/unit_test.hpp>

#include <thread>

#include "pstrain/ps/shard.hpp"

using namespace pstrain::ps;

BOOST_AUTO_TEST_CASE(shard_ranges_tile_the_vector_evenly) {
  for (int shards : {1, 2, 3, 7}) {
    size_t next = 0;
    for (int i = 0; i < shards; ++i) {
      auto range = shardRange(101770, shards, i);
      BOOST_TEST(range.offset == next);
      BOOST_TEST(range.count >= 101770u / size_t(shards));
      BOOST_TEST(range.count <= 101770u / size_t(shards) + 1);
      next += range.count;
    }
    BOOST_TEST(next == 101770u);
  }
}

BOOST_AUTO_TEST_CASE(async_push_applies_one_global_step) {
  Shard shard({1.0f, 2.0f}, std::make_unique<Sgd>(2, 0.5f), 10, 0);
  float gradient[] = {2.0f, -2.0f};
  float out[2];
  auto result = shard.push(gradient, out);
  BOOST_TEST(result.globalStep == 1u);
  BOOST_TEST(result.applied);
  BOOST_TEST(result.advanced);
  BOOST_TEST(!result.done);
  BOOST_TEST(out[0] == 0.0f);
  BOOST_TEST(out[1] == 3.0f);
}

BOOST_AUTO_TEST_CASE(no_push_is_applied_beyond_train_steps) {
  const std::uint64_t trainSteps = 1000;
  Shard shard(std::vector<float>(64, 0.0f), std::make_unique<Sgd>(64, 1.0f), trainSteps, 0);
  std::vector<float> gradient(64, -1.0f);  // each applied step adds 1 to every parameter
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      std::vector<float> out(64);
      while (!shard.push(gradient.data(), out.data()).done) {
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::vector<float> out(64);
  auto state = shard.read(out.data());
  BOOST_TEST(state.globalStep == trainSteps);
  BOOST_TEST(state.done);
  BOOST_TEST(out[0] == float(trainSteps));
  auto late = shard.push(gradient.data(), out.data());
  BOOST_TEST(!late.applied);
  BOOST_TEST(late.globalStep == trainSteps);
  BOOST_TEST(out[0] == float(trainSteps));
}

BOOST_AUTO_TEST_CASE(sync_mode_averages_one_gradient_per_worker) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1, 1.0f), 5, 2);
  float out1 = 0;
  float out2 = 0;
  float g1 = 2.0f;
  float g2 = 4.0f;
  Shard::StepResult r1{};
  std::thread first([&] { r1 = shard.push(&g1, &out1); });
  auto r2 = shard.push(&g2, &out2);
  first.join();
  BOOST_TEST(r1.globalStep == 1u);
  BOOST_TEST(r2.globalStep == 1u);
  BOOST_TEST(out1 == -3.0f);  // 0 - mean(2, 4)
  BOOST_TEST(out2 == -3.0f);
  BOOST_TEST(r1.advanced != r2.advanced);  // exactly one push completed the step
}

BOOST_AUTO_TEST_CASE(adam_first_step_moves_by_the_learning_rate) {
  Adam adam(3, 0.1f);
  float params[] = {1.0f, 1.0f, 1.0f};
  float gradient[] = {5.0f, -0.001f, 0.0f};
  adam.apply(params, gradient);
  BOOST_TEST(std::abs(params[0] - 0.9f) < 1e-5);
  BOOST_TEST(std::abs(params[1] - 1.1f) < 1e-4);
  BOOST_TEST(params[2] == 1.0f);
}
