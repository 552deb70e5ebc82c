#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "pstrain/ps/optimizer.hpp"
#include "pstrain/ps/request_handle.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// The ps's default request handle, as ps-lite's KVServerDefaultHandle: a push's gradient
// becomes a global step of the shard (Shard: the optimizer, combining, the sync barrier), the
// step is reported, and the last step ends training: the clock stops and `completed` runs (the
// final checkpoint). The serving loop hands it requests and knows nothing of the optimizer.
class UpdateRule : public RequestHandle {
 public:
  struct Options {
    int index = 0;  // of the ps, for its log lines
    std::uint64_t generation = 0;  // of the cut it serves, for its reports
    Shard::Options shard;
  };

  UpdateRule(Options options, std::vector<float> initial, std::unique_ptr<Optimizer> optimizer,
             ServerObserver& observer, std::function<void()> completed);

  Shard& shard() { return shard_; }
  std::uint64_t globalStep() const { return shard_.state().globalStep; }

  // Starts the training clock, once: when the chief arrives, or at once for a run restored
  // under way.
  void startClock();
  // Of a rule that takes over from `earlier` (a re-cut): the same clock.
  void continueClock(const UpdateRule& earlier);

  Answer pull(std::uint32_t worker) override;
  Answer push(const PushRequest& request) override;
  // Adopted if later than the shard (Shard::adopt), else ignored.
  void adopt(std::uint32_t worker, std::uint64_t globalStep, const float* values) override;

  // Applies no push from now on and releases those waiting at the sync barrier; `why` is what
  // the pushes refused from now on are told.
  void stop(ServerObserver::Refusal why);

 private:
  void advanced(const Shard::StepResult& result, std::uint64_t localStep, float loss,
                std::uint32_t worker);

  const Options options_;
  ServerObserver& observer_;
  const std::function<void()> completed_;
  Shard shard_;
  std::once_flag clockStarted_;
  std::chrono::steady_clock::time_point startTime_;
  std::atomic<int> pushesReporting_{0};  // pushes between the shard and their last report
  std::atomic<bool> endToReport_{false};  // the last step is applied; end_ is set
  std::atomic<ServerObserver::Refusal> stoppedFor_{ServerObserver::Refusal::kStopped};
  struct {
    std::uint64_t step = 0;
    double seconds = 0;  // since the clock started
  } end_;
};

}  // namespace pstrain::ps
