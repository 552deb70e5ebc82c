#include "pstrain/ps/update_rule.hpp"

#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"

namespace pstrain::ps {

UpdateRule::UpdateRule(Options options, std::vector<float> initial,
                       std::unique_ptr<Optimizer> optimizer, observe::Metrics& metrics,
                       std::function<void()> completed)
    : options_(std::move(options)),
      metrics_(metrics),
      completed_(std::move(completed)),
      shard_(std::move(initial), std::move(optimizer), options_.shard) {}

void UpdateRule::startClock() {
  std::call_once(clockStarted_, [this] { startTime_ = std::chrono::steady_clock::now(); });
}

UpdateRule::Answer UpdateRule::pull() {
  const auto start = std::chrono::steady_clock::now();
  auto result = shard_.read();
  const double seconds = secondsSince(start);
  metrics_.pullSeconds().Observe(seconds);
  return {std::move(result), seconds};
}

UpdateRule::Answer UpdateRule::push(std::uint32_t worker, std::uint64_t localStep, float loss,
                                    const float* gradient) {
  const auto start = std::chrono::steady_clock::now();
  auto result = shard_.push(worker, gradient);
  const double seconds = secondsSince(start);
  metrics_.pushSeconds().Observe(seconds);
  metrics_.workers.stepped(worker, localStep);
  if (result.advanced) report(result, localStep, loss, worker);
  return {std::move(result), seconds};
}

void UpdateRule::report(const Shard::StepResult& result, std::uint64_t localStep, float loss,
                        std::uint32_t worker) {
  auto logger = log::logger("ps");
  metrics_.recordStep(result.globalStep, loss);
  const auto& shard = options_.shard;
  if (shard.syncWorkers > 0 && result.averaged < shard.syncWorkers) {
    logger->warn("PS {}: global step {} averaged {} of {} workers' gradients: the others did not "
                 "come within {} ms",
                 options_.index, result.globalStep, result.averaged, shard.syncWorkers,
                 shard.syncTimeout.count());
    metrics_.events().averaged(result.globalStep, result.averaged, shard.syncWorkers);
  }
  if (result.globalStep % std::uint64_t(options_.logEverySteps) == 0 || result.done) {
    logger->info("PS {}: global step {} done (worker {}, local step {}, loss {:.4f})",
                 options_.index, result.globalStep, worker, localStep, loss);
    metrics_.events().step(result.globalStep, loss, worker, localStep);
  }
  if (result.done) {
    const double elapsed = secondsSince(startTime_);
    logger->info("Training ends @ {:.6f}", unixTime());
    logger->info("Training elapsed time: {:.6f} s", elapsed);
    metrics_.events().done(result.globalStep, elapsed);
    metrics_.setState(observe::State::kCompleted);
    completed_();
    log::flush();
  }
}

}  // namespace pstrain::ps
