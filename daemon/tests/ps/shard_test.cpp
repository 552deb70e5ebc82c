#define BOOST_TEST_MODULE shard
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/ps/checkpoint.hpp"
#include "pstrain/ps/shard.hpp"
#include "support/wait.hpp"

using namespace pstrain::ps;
using pstrain::testing::waitFor;

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

namespace {

Shard::Options asyncSteps(std::uint64_t trainSteps) {
  return Shard::Options{trainSteps, false, {}, {}};
}

Shard::Options syncSteps(std::uint64_t trainSteps, int timeoutMs = 30000) {
  return Shard::Options{trainSteps, true, std::chrono::milliseconds(timeoutMs), {}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(async_push_applies_one_global_step) {
  Shard shard({1.0f, 2.0f}, std::make_unique<Sgd>(0.5f), asyncSteps(10));
  float gradient[] = {2.0f, -2.0f};
  auto result = shard.push(0, gradient, 0);
  BOOST_TEST(result.globalStep == 1u);
  BOOST_TEST(result.applied);
  BOOST_TEST(result.advanced);
  BOOST_TEST(!result.done);
  BOOST_TEST(result.params.get()[0] == 0.0f);
  BOOST_TEST(result.params.get()[1] == 3.0f);
}

BOOST_AUTO_TEST_CASE(concurrent_pushes_are_each_one_step_and_none_beyond_train_steps) {
  const std::uint64_t trainSteps = 3000;
  const size_t size = 10000;  // several blocks: threads share the passes
  Shard shard(std::vector<float>(size, 0.0f), std::make_unique<Sgd>(1.0f), asyncSteps(trainSteps));
  std::vector<float> gradient(size, -1.0f);  // each applied step adds 1 to every parameter
  std::vector<std::vector<std::uint64_t>> stepsSeen(8);
  std::vector<std::thread> workers;
  for (std::uint32_t w = 0; w < 8; ++w) {
    workers.emplace_back([&, w] {
      for (;;) {
        auto result = shard.push(w, gradient.data(), 0);
        if (result.applied) stepsSeen[w].push_back(result.globalStep);
        // The answer holds at least this push's step, in every block.
        const float* out = result.params.get();
        if (result.applied && (out[0] < float(result.globalStep) ||
                               out[size - 1] < float(result.globalStep))) {
          stepsSeen[w].push_back(0);
        }
        if (result.done) break;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::vector<std::uint64_t> all;
  for (const auto& steps : stepsSeen) all.insert(all.end(), steps.begin(), steps.end());
  std::sort(all.begin(), all.end());
  std::vector<std::uint64_t> expected(trainSteps);
  std::iota(expected.begin(), expected.end(), 1);
  BOOST_TEST(all == expected, boost::test_tools::per_element());
  auto state = shard.read();
  BOOST_TEST(state.globalStep == trainSteps);
  BOOST_TEST(state.done);
  BOOST_TEST(state.params.get()[0] == float(trainSteps));
  BOOST_TEST(state.params.get()[size - 1] == float(trainSteps));
  auto late = shard.push(0, gradient.data(), 0);
  BOOST_TEST(!late.applied);
  BOOST_TEST(late.globalStep == trainSteps);
  BOOST_TEST(late.params.get()[0] == float(trainSteps));
}

BOOST_AUTO_TEST_CASE(adam_steps_applied_together_out_of_place_by_ranges_equal_steps_one_by_one) {
  const size_t size = 1000;
  std::vector<std::vector<float>> gradients(3, std::vector<float>(size));
  for (size_t s = 0; s < 3; ++s) {
    for (size_t i = 0; i < size; ++i) gradients[s][i] = std::sin(float(i * (s + 1)));
  }
  Adam oneByOne(size, 0.01f);
  std::vector<float> expected(size, 0.5f);
  for (const auto& gradient : gradients) oneByOne.apply(expected.data(), gradient.data(), size);

  Adam together(size, 0.01f);
  const std::vector<float> before(size, 0.5f);
  std::vector<float> params(size, 0.0f);
  const float* steps[] = {gradients[0].data(), gradients[1].data(), gradients[2].data()};
  together.beginSteps(3);
  together.applySteps(before.data(), params.data(), steps, 600, size);  // ranges in any order
  together.applySteps(before.data(), params.data(), steps, 0, 600);
  BOOST_TEST(params == expected, boost::test_tools::per_element());
  BOOST_TEST(before == std::vector<float>(size, 0.5f), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_answer_keeps_the_parameters_it_was_given) {
  // Answers share the shard's parameters instead of copying them: later steps must not change
  // what an earlier answer carries, in either mode.
  for (auto options : {asyncSteps(10), syncSteps(10)}) {
    Shard shard({1.0f}, std::make_unique<Sgd>(1.0f), options);
    shard.setWorkers(1);
    float g = 1.0f;
    auto read = shard.read();
    auto first = shard.push(0, &g, 0);
    auto second = shard.push(0, &g, first.paramsStep);
    BOOST_TEST(*read.params == 1.0f);
    BOOST_TEST(*first.params == 0.0f);
    BOOST_TEST(*second.params == -1.0f);
    BOOST_TEST(*shard.read().params == -1.0f);
  }
}

BOOST_AUTO_TEST_CASE(sync_mode_averages_one_gradient_per_worker) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5));
  shard.setWorkers(2);
  float g1 = 2.0f;
  float g2 = 4.0f;
  Shard::StepResult r1{};
  std::thread first([&] { r1 = shard.push(0, &g1, 0); });
  auto r2 = shard.push(1, &g2, 0);
  first.join();
  BOOST_TEST(r1.globalStep == 1u);
  BOOST_TEST(r2.globalStep == 1u);
  BOOST_TEST(*r1.params == -3.0f);  // 0 - mean(2, 4)
  BOOST_TEST(*r2.params == -3.0f);
  BOOST_TEST(r1.advanced != r2.advanced);  // exactly one push completed the step
}

// Each of k workers' steps is a step on k times the batch: SGD takes k times the learning rate,
// Adam √k, reached over the warm-up's global steps, from the configured one at the first.
BOOST_AUTO_TEST_CASE(sync_learning_rate_follows_the_gradients_averaged_after_the_warm_up) {
  const SyncLearningRate adam{true, true, 100};
  BOOST_TEST(adam.scale(4, 99) == 2.0f);
  BOOST_TEST(adam.scale(4, 500) == 2.0f);
  BOOST_TEST(adam.scale(4, 49) == 1.5f);
  BOOST_TEST(adam.scale(4, 0) == 1.01f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(adam.scale(1, 500) == 1.0f);
  const SyncLearningRate sgd{true, false, 0};
  BOOST_TEST(sgd.scale(4, 0) == 4.0f);
  BOOST_TEST((SyncLearningRate{false, false, 0}.scale(4, 0)) == 1.0f);
}

BOOST_AUTO_TEST_CASE(a_sync_step_applies_the_scaled_learning_rate) {
  auto options = syncSteps(5);
  options.syncLearningRate = {true, false, 0};  // SGD: 2 workers, twice the rate
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), options);
  shard.setWorkers(2);
  float g1 = 2.0f;
  float g2 = 4.0f;
  std::thread first([&] { shard.push(0, &g1, 0); });
  auto r2 = shard.push(1, &g2, 0);
  first.join();
  BOOST_TEST(*r2.params == -6.0f);  // 0 - 2 * mean(2, 4)
}

BOOST_AUTO_TEST_CASE(sync_barrier_counts_a_worker_that_pushes_again_once) {
  // Worker 0's connection broke while its push waited; it reconnected, read step 1's parameters
  // once the step was taken (read(worker)) and pushed again. Its first gradient and worker 1's
  // make step 1; its second waits for step 2, which the deadline closes without worker 1.
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5, 300));
  shard.setWorkers(2);
  float a = 2.0f;
  float b = 100.0f;
  float other = 4.0f;
  auto first = std::async(std::launch::async, [&] { return shard.push(0, &a, 0); });
  BOOST_REQUIRE(waitFor([&] { return shard.arrivals() == 1; }, std::chrono::seconds(10)));
  auto again = std::async(std::launch::async, [&] { return shard.push(0, &b, 1); });
  auto rOther = shard.push(1, &other, 0);
  BOOST_TEST(rOther.globalStep == 1u);
  BOOST_TEST(first.get().applied);
  const auto repeat = again.get();
  BOOST_TEST(shard.state().globalStep == 2u);
  BOOST_TEST(repeat.globalStep == 2u);
  BOOST_TEST(repeat.advanced);
  BOOST_TEST(repeat.averaged == 1);
  BOOST_TEST(*repeat.params == -(a + other) / 2 - b);
}

BOOST_AUTO_TEST_CASE(a_sync_push_a_step_stale_takes_its_place_at_the_step_without_its_gradient) {
  // Worker 1's push came after step 1 closed at the deadline: computed on step 0's parameters,
  // it goes into no step. It counts at step 2 all the same, which closes on worker 0's gradient
  // at once instead of waiting the deadline for worker 1's next push, and it is answered with
  // step 2's parameters.
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5, 30000));
  shard.setWorkers(1);
  float a = 2.0f;
  float late = 100.0f;
  BOOST_REQUIRE(shard.push(0, &a, 0).applied);  // step 1 (as if worker 1 had missed it)
  shard.setWorkers(2);
  const auto start = std::chrono::steady_clock::now();
  auto stale = std::async(std::launch::async, [&] { return shard.push(1, &late, 0); });
  BOOST_REQUIRE(waitFor([&] { return shard.arrivals() == 1; }, std::chrono::seconds(10)));
  const auto fresh = shard.push(0, &a, 1);
  const auto refused = stale.get();
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(10)));
  BOOST_TEST(fresh.applied);
  BOOST_TEST(fresh.averaged == 1);
  BOOST_TEST(!refused.applied);
  BOOST_TEST(refused.stale);
  BOOST_TEST(refused.staleness == 1u);
  BOOST_TEST(refused.paramsStep == 2u);
  BOOST_TEST(*refused.params == -2 * a);
  // With a push in flight a gradient one step old is what the worker meant: applied.
  auto pipelined = std::async(std::launch::async, [&] { return shard.push(1, &a, 1, 1); });
  BOOST_REQUIRE(waitFor([&] { return shard.arrivals() == 1; }, std::chrono::seconds(10)));
  BOOST_TEST(shard.push(0, &a, 2).applied);
  BOOST_TEST(pipelined.get().applied);
}

BOOST_AUTO_TEST_CASE(sync_pushes_that_are_all_stale_are_let_go_without_a_step) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5, 30000));
  shard.setWorkers(1);
  float g = 1.0f;
  BOOST_REQUIRE(shard.push(0, &g, 0).applied);
  const auto stale = shard.push(0, &g, 0);
  BOOST_TEST(!stale.applied);
  BOOST_TEST(!stale.advanced);
  BOOST_TEST(stale.stale);
  BOOST_TEST(shard.state().globalStep == 1u);
  BOOST_TEST(*shard.read().params == -1.0f);
}

BOOST_AUTO_TEST_CASE(sync_step_without_a_lost_worker_is_taken_at_the_deadline) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5, 100));
  shard.setWorkers(3);
  float g = 6.0f;
  const auto start = std::chrono::steady_clock::now();
  auto result = shard.push(0, &g, 0);
  BOOST_TEST(result.advanced);
  BOOST_TEST(result.averaged == 1);
  BOOST_TEST(*result.params == -6.0f);
  BOOST_TEST((std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100)));
}

BOOST_AUTO_TEST_CASE(sync_step_waits_no_longer_for_a_worker_that_leaves) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5));  // 30 s deadline
  shard.setWorkers(2);
  float g = 6.0f;
  Shard::StepResult result{};
  std::thread waiting([&] { result = shard.push(0, &g, 0); });
  // Worker 1 leaves, before or after worker 0's gradient came: the step is taken without it.
  const auto start = std::chrono::steady_clock::now();
  shard.setWorkers(1);
  waiting.join();
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
  BOOST_TEST(result.advanced);
  BOOST_TEST(result.averaged == 1);
  BOOST_TEST(result.workers == 1);
  BOOST_TEST(*result.params == -6.0f);
}

BOOST_AUTO_TEST_CASE(sync_step_waits_for_a_worker_that_joins) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5));
  shard.setWorkers(1);
  float g0 = 2.0f;
  float g1 = 4.0f;
  BOOST_TEST(shard.push(0, &g0, 0).averaged == 1);  // alone: a step of its own
  shard.setWorkers(2);
  Shard::StepResult r0{};
  std::thread first([&] { r0 = shard.push(0, &g0, 1); });
  auto r1 = shard.push(1, &g1, 1);
  first.join();
  BOOST_TEST(shard.state().globalStep == 2u);
  BOOST_TEST(r0.globalStep == 2u);
  BOOST_TEST(r1.globalStep == 2u);
  BOOST_TEST(*r1.params == -5.0f);  // -2, then -mean(2, 4)
}

BOOST_AUTO_TEST_CASE(close_releases_pushes_waiting_at_the_sync_barrier) {
  Shard shard({0.0f}, std::make_unique<Sgd>(1.0f), syncSteps(5));
  shard.setWorkers(2);
  float g = 1.0f;
  Shard::StepResult result{};
  std::thread waiting([&] { result = shard.push(0, &g, 0); });
  // Closed before the push came, the shard would refuse it without a barrier to release.
  BOOST_REQUIRE(waitFor([&] { return shard.arrivals() == 1; }, std::chrono::seconds(10)));
  const auto start = std::chrono::steady_clock::now();
  shard.close();
  waiting.join();
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
  BOOST_TEST(!result.applied);
  BOOST_TEST(shard.state().globalStep == 0u);
}

BOOST_AUTO_TEST_CASE(serialize_and_restore_carry_parameters_step_and_adam_state) {
  const size_t size = 5000;
  std::vector<float> g(size, 0.25f);
  Shard original(std::vector<float>(size, 1.0f), std::make_unique<Adam>(size, 0.01f),
                 asyncSteps(100));
  for (int i = 0; i < 3; ++i) original.push(0, g.data(), 0);
  Shard restored(std::vector<float>(size, 0.0f), std::make_unique<Adam>(size, 0.01f),
                 asyncSteps(100));
  auto snapshot = original.serialize();
  BOOST_TEST(snapshot.globalStep == 3u);
  restored.restore(snapshot.globalStep, snapshot.bytes);
  BOOST_TEST(restored.state().globalStep == 3u);
  auto a = original.push(0, g.data(), 0);
  auto b = restored.push(0, g.data(), 0);
  BOOST_TEST(std::vector<float>(a.params.get(), a.params.get() + size) ==
                 std::vector<float>(b.params.get(), b.params.get() + size),
             boost::test_tools::per_element());
  Shard other(std::vector<float>(10, 0.0f), std::make_unique<Adam>(10, 0.01f), asyncSteps(100));
  BOOST_CHECK_THROW(other.restore(3, original.serialize().bytes), pstrain::DecodeError);
}

BOOST_AUTO_TEST_CASE(a_copy_is_adopted_only_when_later_than_the_shard) {
  Shard shard({1.0f, 2.0f}, std::make_unique<Sgd>(0.5f), asyncSteps(1000));
  const float copy[] = {5.0f, 6.0f}, other[] = {7.0f, 8.0f};
  BOOST_TEST(shard.adopt(400, copy).has_value());
  BOOST_TEST(!shard.adopt(400, other).has_value());  // not later than its own
  auto state = shard.read();
  BOOST_TEST(state.globalStep == 400u);
  BOOST_TEST(state.paramsStep == 400u);
  BOOST_TEST(state.params.get()[0] == 5.0f);
  float gradient[] = {2.0f, -2.0f};
  BOOST_TEST(shard.push(0, gradient, 400).globalStep == 401u);
  BOOST_TEST(!shard.adopt(401, other).has_value());
  BOOST_TEST(shard.read().params.get()[0] == 4.0f);
}

BOOST_AUTO_TEST_CASE(a_restored_shard_adopts_a_later_copy_undoing_its_steps_since) {
  // Restored at step 3 where the workers saw step 5: the copy of step 5 replaces the
  // parameters, the optimizer goes on from the checkpoint's state.
  float gradient[] = {2.0f, -2.0f};
  Shard original({1.0f, 2.0f}, std::make_unique<Sgd>(0.5f), asyncSteps(1000));
  for (int i = 0; i < 3; ++i) original.push(0, gradient, 0);
  const auto checkpoint = original.serialize();
  const float older[] = {7.0f, 8.0f}, later[] = {5.0f, 6.0f};
  Shard restored({0.0f, 0.0f}, std::make_unique<Sgd>(0.5f), asyncSteps(1000));
  restored.restore(checkpoint.globalStep, checkpoint.bytes);
  BOOST_TEST(!restored.adopt(3, older).has_value());  // not later than its own
  BOOST_TEST(restored.adopt(5, later).has_value());
  BOOST_TEST(restored.read().globalStep == 5u);
  BOOST_TEST(restored.read().params.get()[1] == 6.0f);

  // A worker that knew it no further pushed first: its step 4, taken on the checkpoint's older
  // parameters, gives way to the copy of step 5.
  Shard moved({0.0f, 0.0f}, std::make_unique<Sgd>(0.5f), asyncSteps(1000));
  moved.restore(checkpoint.globalStep, checkpoint.bytes);
  moved.push(0, gradient, 3);
  BOOST_TEST(moved.adopt(5, later).has_value());
  BOOST_TEST(moved.read().globalStep == 5u);
  BOOST_TEST(moved.read().params.get()[1] == 6.0f);
  BOOST_TEST(moved.checksum() == restored.checksum());
}

BOOST_AUTO_TEST_CASE(a_sync_step_under_way_when_a_copy_is_adopted_is_refused_as_replaced) {
  // Worker 0's gradient, computed on the restored step 3, waits at the barrier for worker 1's
  // when worker 1 gives the copy of step 5: the step's gradients go with the parameters they
  // were computed on, and worker 0 is answered with the copy.
  Shard shard({1.0f, 2.0f}, std::make_unique<Sgd>(0.5f), syncSteps(100));
  const float restoredAt3[] = {1.0f, 2.0f}, later[] = {5.0f, 6.0f};
  BOOST_REQUIRE(shard.adopt(3, restoredAt3).has_value());
  shard.setWorkers(2);
  float gradient[] = {2.0f, -2.0f};
  auto waiting = std::async(std::launch::async, [&] { return shard.push(0, gradient, 3); });
  BOOST_REQUIRE(waitFor([&] { return shard.arrivals() == 1; }, std::chrono::seconds(10)));
  BOOST_REQUIRE(shard.adopt(5, later).has_value());
  auto replaced = waiting.get();
  BOOST_TEST(!replaced.applied);
  BOOST_TEST(replaced.replaced);
  BOOST_TEST(replaced.globalStep == 5u);
  BOOST_TEST(replaced.params.get()[0] == 5.0f);
  BOOST_TEST(shard.arrivals() == 0);
  // Both compute on the copy: one step of the two gradients' average.
  auto first = std::async(std::launch::async, [&] { return shard.push(0, gradient, 5); });
  auto second = shard.push(1, gradient, 5);
  BOOST_TEST(first.get().applied);
  BOOST_TEST(second.applied);
  BOOST_TEST(second.globalStep == 6u);
  BOOST_TEST(shard.read().params.get()[0] == 4.0f);
}

BOOST_AUTO_TEST_CASE(a_sync_push_from_before_an_adopted_copy_waits_with_the_step_it_came_to) {
  // The ps adopted worker 0's copy of step 12 while worker 1, new, computed on step 0. Worker 1
  // pushed to the other ps as well, where the step waits for the others' pushes, which wait for
  // this ps's step: so here too its push counts at step 13 (without its gradient) and is
  // answered when it is taken, not at once (the two ps would then wait the deadline).
  Shard shard({1.0f, 2.0f}, std::make_unique<Sgd>(0.5f), syncSteps(100));
  shard.setWorkers(2);
  const float copy[] = {5.0f, 6.0f};
  BOOST_REQUIRE(shard.adopt(12, copy).has_value());
  float gradient[] = {2.0f, -2.0f};
  auto replaced = std::async(std::launch::async, [&] { return shard.push(1, gradient, 0); });
  BOOST_REQUIRE(waitFor([&] { return shard.arrivals() == 1; }, std::chrono::seconds(10)));
  BOOST_TEST((replaced.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout));
  const auto fresh = shard.push(0, gradient, 12);
  BOOST_TEST(fresh.applied);
  BOOST_TEST(fresh.globalStep == 13u);
  const auto refused = replaced.get();
  BOOST_TEST(!refused.applied);
  BOOST_TEST(refused.replaced);
  BOOST_TEST(refused.paramsStep == 13u);
  BOOST_TEST(refused.params.get()[0] == 4.0f);  // the copy's 5 less one step of worker 0's alone
}

BOOST_AUTO_TEST_CASE(a_sync_gradient_computed_before_an_adopted_copy_is_refused) {
  // A worker new to the run read the parameters at step 0; then the ps adopted a copy of step
  // 12. Its gradient belongs to no step of these parameters: refused, the answer gives the copy.
  Shard shard({1.0f, 2.0f}, std::make_unique<Sgd>(0.5f), syncSteps(100));
  shard.setWorkers(1);
  const float copy[] = {5.0f, 6.0f};
  BOOST_REQUIRE(shard.adopt(12, copy).has_value());
  float gradient[] = {2.0f, -2.0f};
  auto stale = shard.push(1, gradient, 0);
  BOOST_TEST(!stale.applied);
  BOOST_TEST(stale.replaced);
  BOOST_TEST(stale.globalStep == 12u);
  BOOST_TEST(stale.params.get()[0] == 5.0f);
  auto fresh = shard.push(1, gradient, 12);  // computed on the copy
  BOOST_TEST(fresh.applied);
  BOOST_TEST(!fresh.replaced);
  BOOST_TEST(fresh.globalStep == 13u);
  BOOST_TEST(fresh.params.get()[0] == 4.0f);
}

BOOST_AUTO_TEST_CASE(checkpoint_file_round_trips_and_refuses_other_bytes) {
  Checkpoint checkpoint{77, CutPosition{3, 2, 1, {50885, 50885}}, 1234, {1, 2, 3, 4, 5}};
  auto decoded = decodeCheckpoint(encodeCheckpoint(checkpoint));
  BOOST_TEST(decoded.runId == 77u);
  BOOST_TEST((decoded.cut == checkpoint.cut));
  BOOST_TEST(decoded.globalStep == 1234u);
  BOOST_TEST(decoded.shard == checkpoint.shard, boost::test_tools::per_element());
  // A local file's fault, not a peer's: DecodeError, which the ps reports naming the file.
  BOOST_CHECK_THROW(decodeCheckpoint({'n', 'o', 'p', 'e'}), pstrain::DecodeError);
  std::vector<std::uint8_t> truncated = encodeCheckpoint(checkpoint);
  truncated.resize(20);
  BOOST_CHECK_THROW(decodeCheckpoint(truncated), pstrain::DecodeError);
}

BOOST_AUTO_TEST_CASE(a_slice_with_its_adam_state_resumes_in_a_shard_of_another_cut) {
  // Two steps on a shard, its slice moved to a new shard: the next step is the one the first
  // shard would have taken, moments and bias correction included.
  Shard first({1.0f, 2.0f, 3.0f}, std::make_unique<Adam>(3, 0.1f), asyncSteps(100));
  float gradient[] = {0.5f, -1.0f, 2.0f};
  first.push(0, gradient, 0);
  first.push(0, gradient, 1);
  const auto slice = first.slice();
  BOOST_TEST(slice.globalStep == 2u);
  BOOST_TEST(slice.optimizer.moments.size() == 2u);
  Shard moved(slice.params, std::make_unique<Adam>(3, 0.1f), asyncSteps(100));
  moved.resume(slice.globalStep, slice.optimizer);
  const auto expected = first.push(0, gradient, 2);
  const auto got = moved.push(0, gradient, 2);
  BOOST_TEST(got.globalStep == 3u);
  for (int i = 0; i < 3; ++i) BOOST_TEST(got.params.get()[i] == expected.params.get()[i]);
  // An optimizer state of another size is refused; none at all starts the moments again.
  OptimizerState wrong{{{1.0f}, {1.0f}}, {1.0, 1.0}};
  BOOST_CHECK_THROW(moved.resume(3, wrong), pstrain::DecodeError);
  BOOST_CHECK_NO_THROW(moved.resume(3, OptimizerState{}));
}

BOOST_AUTO_TEST_CASE(buffer_pool_hands_out_the_most_recently_returned_buffer_first) {
  auto pool = BufferPool::create(4);
  auto first = pool->take();
  auto second = pool->take();
  float* const firstAddress = first.get();
  float* const secondAddress = second.get();
  BOOST_TEST(firstAddress != secondAddress);
  first.reset();
  second.reset();  // returned last
  auto again = pool->take();
  BOOST_TEST(again.get() == secondAddress);
  BOOST_TEST(pool->take().get() == firstAddress);
  // A buffer still out when the pool's owner lets go of it goes back to the pool it came from.
  pool.reset();
  again.reset();
}

BOOST_AUTO_TEST_CASE(buffer_pool_buffers_start_on_a_cache_line) {
  // The model's size: glibc's malloc would place such a block 16 bytes into its pages.
  auto pool = BufferPool::create(101770);
  std::vector<std::shared_ptr<float>> taken;
  for (int i = 0; i < 3; ++i) taken.push_back(pool->take());
  for (const auto& buffer : taken) {
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(buffer.get()) % pstrain::kCacheLineBytes == 0u);
  }
}

BOOST_AUTO_TEST_CASE(adam_first_step_moves_by_the_learning_rate) {
  Adam adam(3, 0.1f);
  float params[] = {1.0f, 1.0f, 1.0f};
  float gradient[] = {5.0f, -0.001f, 0.0f};
  adam.apply(params, gradient, 3);
  BOOST_TEST(std::abs(params[0] - 0.9f) < 1e-5);
  BOOST_TEST(std::abs(params[1] - 1.1f) < 1e-4);
  BOOST_TEST(params[2] == 1.0f);
}
