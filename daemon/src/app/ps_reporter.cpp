#include "pstrain/app/ps_reporter.hpp"

#include <limits>
#include <vector>

#include "pstrain/common/log.hpp"

namespace pstrain::app {

namespace event = observe::event;

PsReporter::PsReporter(int index, int logEverySteps, observe::Progress& progress,
                       observe::Meters& meters, observe::WorkerRoster& workers,
                       observe::Events& events)
    : index_(index),
      logEverySteps_(logEverySteps),
      progress_(progress),
      meters_(meters),
      workers_(workers),
      events_(events) {}

void PsReporter::restored(std::uint64_t globalStep, const std::string& path, bool completed) {
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  events_.emit(event::restored(index_, globalStep, path, completed));
}

void PsReporter::shardRecovered(std::uint32_t worker, std::uint64_t globalStep, bool completed) {
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  events_.emit(event::recovered(index_, globalStep, worker));
  if (completed) progress_.setState(observe::State::kCompleted);
}

void PsReporter::shardCopyIgnored(std::uint32_t worker, std::uint64_t copyStep,
                                  std::uint64_t globalStep) {
  log::logger("ps")->info(
      "PS {}: ignored {}'s copy of the shard at global step {}: the shard is at global step {}",
      index_, observe::workerPeer(worker), copyStep, globalStep);
}

void PsReporter::checkpointWritten(std::uint64_t globalStep, const std::string& path) {
  events_.emit(event::checkpoint(index_, globalStep, path));
}

void PsReporter::serving(bool completed) {
  progress_.setState(completed ? observe::State::kCompleted : observe::State::kTraining);
}

void PsReporter::workerArrived(std::uint32_t worker, const std::string& address) {
  std::lock_guard<std::mutex> lock(mutex_);
  workerAddresses_[worker] = address;
  std::vector<std::string> peers;
  for (const auto& [index, at] : workerAddresses_) {
    peers.push_back(observe::workerPeer(index) + " at " + at);
  }
  progress_.setPeers(std::move(peers));
}

void PsReporter::workerWaitsForChief(std::uint32_t worker) {
  log::logger("ps")->info("PS {}: worker {} waits for the chief, worker 0", index_, worker);
}

void PsReporter::workerJoined(std::uint32_t worker, const std::string& address,
                              std::uint64_t globalStep) {
  workers_.joined(worker);
  events_.emit(event::workerConnected(index_, worker, address, globalStep));
}

void PsReporter::workerLeft(std::uint32_t worker) { workers_.left(worker); }

void PsReporter::pulled(double seconds) { meters_.pullSeconds().Observe(seconds); }

void PsReporter::pushed(std::uint32_t worker, std::uint64_t localStep, double seconds) {
  meters_.pushSeconds().Observe(seconds);
  workers_.stepped(worker, localStep);
}

void PsReporter::pushApplied(std::uint64_t staleness) {
  meters_.staleness().Observe(double(staleness));
  std::lock_guard<std::mutex> lock(mutex_);
  stalenessSum_ += staleness;
  ++stalenessCount_;
}

void PsReporter::stepApplied(const Step& step) {
  progress_.recordStep(step.globalStep, step.loss);
  workers_.lossOf(step.worker, step.loss);
  if (step.syncWorkers > 0 && step.averaged < step.syncWorkers) {
    events_.emit(event::averaged(index_, step.globalStep, step.averaged, step.syncWorkers,
                                 step.syncTimeoutMs));
  }
  if (step.globalStep % std::uint64_t(logEverySteps_) == 0 || step.done) {
    double staleness = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stalenessCount_ > 0) staleness = double(stalenessSum_) / double(stalenessCount_);
      stalenessSum_ = stalenessCount_ = 0;
    }
    events_.emit(
        event::psStep(index_, step.globalStep, step.worker, step.localStep, step.loss, staleness));
  }
}

void PsReporter::trainingCompleted(std::uint64_t globalStep, double elapsedSeconds) {
  const auto staleness = meters_.stalenessSummary();
  events_.emit(event::staleness(index_, staleness.pushes, staleness.mean, staleness.p99));
  events_.emit(event::done("ps", globalStep, elapsedSeconds));
  progress_.setState(observe::State::kCompleted);
}

void PsReporter::workerFinished(std::uint32_t worker, std::uint64_t localSteps) {
  events_.emit(event::finished(index_, worker, localSteps));
  workers_.finished(worker, localSteps);
}

void PsReporter::rejected(const std::string& address, const std::string& reason) {
  ++meters_.rejectedConnections;
  events_.emit(event::rejected(address, reason));
}

}  // namespace pstrain::app
