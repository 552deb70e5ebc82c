#include "pstrain/ps/update_rule.hpp"

#include "pstrain/common/timestamp.hpp"

namespace pstrain::ps {

UpdateRule::UpdateRule(Options options, std::vector<float> initial,
                       std::unique_ptr<Optimizer> optimizer, ServerObserver& observer,
                       std::function<void()> completed)
    : options_(std::move(options)),
      observer_(observer),
      completed_(std::move(completed)),
      shard_(std::move(initial), std::move(optimizer), options_.shard) {}

void UpdateRule::startClock() {
  std::call_once(clockStarted_, [this] { startTime_ = std::chrono::steady_clock::now(); });
}

void UpdateRule::continueClock(const UpdateRule& earlier) {
  std::call_once(clockStarted_, [&] { startTime_ = earlier.startTime_; });
}

UpdateRule::Answer UpdateRule::pull(std::uint32_t worker) {
  const auto start = std::chrono::steady_clock::now();
  auto result = shard_.read(worker);
  const double seconds = secondsSince(start);
  observer_.pulled(result.globalStep, seconds);
  return {std::move(result), seconds};
}

UpdateRule::Answer UpdateRule::push(const PushRequest& request) {
  ++pushesReporting_;
  const auto start = std::chrono::steady_clock::now();
  auto result = shard_.push(request.worker, request.gradient, request.basedOn, request.lag);
  const double seconds = secondsSince(start);
  observer_.pushed(request.worker, request.localStep, seconds);
  if (result.applied) {
    observer_.pushApplied({request.worker, request.incarnation, request.pushNumber,
                           options_.generation, result.appliedStep, result.staleness,
                           result.advanced, request.lag});
  } else {
    observer_.pushRefused(request.worker, request.incarnation, request.pushNumber,
                          options_.generation, result.globalStep,
                          result.done       ? ServerObserver::Refusal::kDone
                          : result.replaced ? ServerObserver::Refusal::kReplaced
                          : result.stale    ? ServerObserver::Refusal::kStale
                                            : stoppedFor_.load());
  }
  if (result.advanced) advanced(result, request.localStep, request.loss, request.worker);
  // The pushes applied with the last step (a batch, a sync step) report from threads of their
  // own: the last of them to leave reports the end, so that every push is in its summary.
  if (--pushesReporting_ == 0 && endToReport_.exchange(false)) {
    observer_.trainingCompleted(end_.step, end_.seconds);
    completed_();
  }
  return {std::move(result), seconds};
}

void UpdateRule::stop(ServerObserver::Refusal why) {
  stoppedFor_ = why;
  shard_.close();
}

void UpdateRule::adopt(std::uint32_t worker, std::uint64_t globalStep, const float* values) {
  const auto fromStep = shard_.state().globalStep;
  const auto checksum = shard_.adopt(globalStep, values);
  if (!checksum) {
    observer_.shardCopyIgnored(worker, globalStep, shard_.state().globalStep);
    return;
  }
  const bool done = shard_.state().done;
  observer_.shardRecovered(
      worker, {options_.generation, options_.shard.offset, shard_.size(), *checksum}, fromStep,
      globalStep, done);
  if (done) completed_();  // the copy is of the final step: write the final checkpoint
}

void UpdateRule::advanced(const Shard::StepResult& result, std::uint64_t localStep, float loss,
                          std::uint32_t worker) {
  const auto& shard = options_.shard;
  observer_.stepApplied({result.globalStep, loss, worker, localStep, result.averaged,
                         shard.sync ? result.workers : 0, std::int64_t(shard.syncTimeout.count()),
                         result.done});
  if (result.done) {
    end_ = {result.globalStep, secondsSince(startTime_)};
    endToReport_ = true;
  }
}

}  // namespace pstrain::ps
