#include "pstrain/app/ps_reporter.hpp"

#include <limits>
#include <vector>

#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"

namespace pstrain::app {
namespace {

std::string workerPeer(std::uint32_t worker) { return "worker " + std::to_string(worker); }

}  // namespace

PsReporter::PsReporter(int index, int logEverySteps, observe::Metrics& metrics)
    : index_(index), logEverySteps_(logEverySteps), metrics_(metrics) {}

void PsReporter::restored(std::uint64_t globalStep, const std::string& path, bool completed) {
  metrics_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  metrics_.events().restored(globalStep, path, completed);
  log::logger("ps")->info("PS {}: restored {} at global step {}{}", index_, path, globalStep,
                          completed ? ": the run has completed, training stays done" : "");
}

void PsReporter::shardRecovered(std::uint32_t worker, std::uint64_t globalStep, bool completed) {
  metrics_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  metrics_.events().recovered(globalStep, workerPeer(worker));
  if (completed) metrics_.setState(observe::State::kCompleted);
  log::logger("ps")->warn(
      "PS {}: no checkpoint, but {} held this shard at global step {}: training goes on from its "
      "copy (Adam's moments start again from zero)",
      index_, workerPeer(worker), globalStep);
}

void PsReporter::shardCopyIgnored(std::uint32_t worker, std::uint64_t copyStep,
                                  std::uint64_t globalStep) {
  log::logger("ps")->info(
      "PS {}: ignored {}'s copy of the shard at global step {}: the shard is at global step {}",
      index_, workerPeer(worker), copyStep, globalStep);
}

void PsReporter::checkpointWritten(std::uint64_t globalStep, const std::string& path) {
  metrics_.events().checkpoint(globalStep, path);
  log::logger("ps")->info("PS {}: checkpoint at global step {} in {}", index_, globalStep, path);
}

void PsReporter::serving(bool completed) {
  metrics_.setState(completed ? observe::State::kCompleted : observe::State::kTraining);
}

void PsReporter::workerArrived(std::uint32_t worker, const std::string& address) {
  std::lock_guard<std::mutex> lock(mutex_);
  workerAddresses_[worker] = address;
  std::vector<std::string> peers;
  for (const auto& [index, at] : workerAddresses_) {
    peers.push_back(workerPeer(index) + " at " + at);
  }
  metrics_.setPeers(std::move(peers));
}

void PsReporter::workerWaitsForChief(std::uint32_t worker) {
  log::logger("ps")->info("PS {}: worker {} waits for the chief, worker 0", index_, worker);
}

void PsReporter::workerJoined(std::uint32_t worker, const std::string& address,
                              std::uint64_t globalStep) {
  metrics_.workers.joined(worker);
  log::logger("ps")->info("PS {}: worker {} connected from {} (global step {})", index_, worker,
                          address, globalStep);
  metrics_.events().connected(workerPeer(worker), globalStep);
}

void PsReporter::workerLeft(std::uint32_t worker) { metrics_.workers.left(worker); }

void PsReporter::pulled(double seconds) { metrics_.pullSeconds().Observe(seconds); }

void PsReporter::pushed(std::uint32_t worker, std::uint64_t localStep, double seconds) {
  metrics_.pushSeconds().Observe(seconds);
  metrics_.workers.stepped(worker, localStep);
}

void PsReporter::pushApplied(std::uint64_t staleness) {
  metrics_.staleness().Observe(double(staleness));
  std::lock_guard<std::mutex> lock(mutex_);
  stalenessSum_ += staleness;
  ++stalenessCount_;
}

void PsReporter::stepApplied(const Step& step) {
  auto logger = log::logger("ps");
  metrics_.recordStep(step.globalStep, step.loss);
  metrics_.workers.lossOf(step.worker, step.loss);
  if (step.syncWorkers > 0 && step.averaged < step.syncWorkers) {
    logger->warn("PS {}: global step {} averaged {} of {} workers' gradients: the others did not "
                 "come within {} ms",
                 index_, step.globalStep, step.averaged, step.syncWorkers, step.syncTimeoutMs);
    metrics_.events().averaged(step.globalStep, step.averaged, step.syncWorkers);
  }
  if (step.globalStep % std::uint64_t(logEverySteps_) == 0 || step.done) {
    logger->info("PS {}: global step {} done (worker {}, local step {}, loss {:.4f})", index_,
                 step.globalStep, step.worker, step.localStep, step.loss);
    double staleness = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stalenessCount_ > 0) staleness = double(stalenessSum_) / double(stalenessCount_);
      stalenessSum_ = stalenessCount_ = 0;
    }
    metrics_.events().step(step.globalStep, step.loss, step.worker, step.localStep, staleness);
  }
}

void PsReporter::trainingCompleted(std::uint64_t globalStep, double elapsedSeconds) {
  auto logger = log::logger("ps");
  logger->info("Training ends @ {:.6f}", unixTime());
  logger->info("Training elapsed time: {:.6f} s", elapsedSeconds);
  const auto staleness = metrics_.stalenessSummary();
  logger->info("PS {}: a push's gradient was {:.2f} global steps old on average (99% within {})",
               index_, staleness.mean, staleness.p99);
  metrics_.events().staleness(staleness.pushes, staleness.mean, staleness.p99);
  metrics_.events().done(globalStep, elapsedSeconds);
  metrics_.setState(observe::State::kCompleted);
}

void PsReporter::workerFinished(std::uint32_t worker, std::uint64_t localSteps) {
  log::logger("ps")->info("PS {}: worker {} finished after {} local steps", index_, worker,
                          localSteps);
  metrics_.events().finished(workerPeer(worker), localSteps);
  metrics_.workers.finished(worker, localSteps);
}

}  // namespace pstrain::app
