#define BOOST_TEST_MODULE evaluator
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <vector>

#include "pstrain/model/layout.hpp"
#include "pstrain/worker/evaluator.hpp"

using namespace pstrain;

namespace {

// Ten 28x28 examples of label 0.
data::Examples tenExamples() {
  data::Examples examples;
  examples.count = 10;
  examples.rows = examples.cols = 28;
  examples.pixels.assign(examples.count * examples.imageSize(), 7);
  examples.labels.assign(examples.count, 0);
  return examples;
}

}  // namespace

// A machine too busy to evaluate: the evaluator's thread is held inside its first report while
// far more snapshots than it keeps are taken. Taking them must not wait for it (it did: training
// then ran at the evaluator's pace), and once it goes on it reports the first snapshot and the
// newest kMaxQueued, in order.
BOOST_AUTO_TEST_CASE(snapshots_beyond_the_queue_replace_the_oldest_without_waiting) {
  const auto layout = model::Layout::mnist({4});
  const auto test = tenExamples();
  const std::vector<float> params(layout.parameterCount(), 0.01f);
  std::mutex mutex;
  std::condition_variable changed;
  bool held = false, release = false;
  std::vector<std::uint64_t> reported;
  {
    worker::Evaluator evaluator(layout, test, [&](const worker::Evaluator::Result& result) {
      std::unique_lock<std::mutex> lock(mutex);
      reported.push_back(result.globalStep);
      held = true;
      changed.notify_all();
      changed.wait(lock, [&] { return release; });
    });
    evaluator.submit(params.data(), 1, 1);
    {
      std::unique_lock<std::mutex> lock(mutex);
      BOOST_REQUIRE(changed.wait_for(lock, std::chrono::seconds(30), [&] { return held; }));
    }
    const std::uint64_t taken = 3 * worker::Evaluator::kMaxQueued;
    auto submitting = std::async(std::launch::async, [&] {
      for (std::uint64_t step = 2; step <= taken + 1; ++step) evaluator.submit(params.data(), step, step);
    });
    const auto taking = submitting.wait_for(std::chrono::seconds(30));
    {
      std::lock_guard<std::mutex> lock(mutex);
      release = true;
    }
    changed.notify_all();
    BOOST_REQUIRE_MESSAGE(taking == std::future_status::ready,
                          "taking snapshots waited for the evaluator");
    evaluator.drain();
    std::lock_guard<std::mutex> lock(mutex);
    BOOST_REQUIRE_EQUAL(reported.size(), 1 + worker::Evaluator::kMaxQueued);
    BOOST_TEST(reported.front() == 1u);
    for (size_t i = 1; i < reported.size(); ++i) {
      BOOST_TEST(reported[i] == taken + 1 - worker::Evaluator::kMaxQueued + i);
    }
  }
}
