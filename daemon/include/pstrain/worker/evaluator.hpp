#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/model/layout.hpp"

namespace pstrain::worker {

// Test accuracy of snapshots of the parameters, on a thread of its own at the lowest CPU
// priority (SCHED_IDLE): training does not wait for evaluations, which run when a core is idle
// (on a busy machine, mostly after training). Each result says when its snapshot was taken, so
// time to accuracy counts to the parameters that reached it, not to their evaluation.
class Evaluator {
 public:
  struct Result {
    std::uint64_t localStep;
    std::uint64_t globalStep;
    double takenAt;  // Unix seconds
    double accuracy;
  };

  // `report` is called on the evaluator's thread, in the order snapshots were taken.
  Evaluator(const model::Layout& layout, const data::Examples& test,
            std::function<void(const Result&)> report);
  // Evaluates what is still queued, then ends the thread.
  ~Evaluator();

  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Copies the parameters for evaluation, and never waits: with kMaxQueued snapshots waiting
  // (a machine too busy to evaluate them as often as they come), the oldest is dropped, so that
  // memory stays bounded and training is not slowed; the curve has fewer points instead.
  void submit(const float* params, std::uint64_t localStep, std::uint64_t globalStep);
  // Waits until every snapshot submitted so far has been reported.
  void drain();

  static constexpr size_t kMaxQueued = 64;

 private:
  struct Snapshot {
    AlignedVector<float> params;
    Result result;
  };
  void run();

  const model::Layout layout_;
  const data::Examples& test_;
  const std::function<void(const Result&)> report_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Snapshot> queued_;
  bool evaluating_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace pstrain::worker
