#include "pstrain/app/ps_reporter.hpp"

#include <limits>
#include <vector>

#include "pstrain/common/log.hpp"

namespace pstrain::app {

namespace event = observe::event;
using Kind = observe::HistoryKind;
using observe::historyFlag;

PsReporter::PsReporter(int index, int logEverySteps, observe::Progress& progress,
                       observe::Meters& meters, observe::WorkerRoster& workers,
                       observe::Events& events)
    : index_(index),
      logEverySteps_(logEverySteps),
      progress_(progress),
      meters_(meters),
      workers_(workers),
      events_(events) {}

void PsReporter::restored(const SliceValues& slice, std::uint64_t globalStep,
                          const std::string& path, bool completed) {
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  events_.emit(event::restored(index_, globalStep, path, completed));
  record({Kind::kRestored, historyFlag(completed), 0, slice.generation, globalStep, 0, 0,
          observe::historyPathHash(path)},
         slice);
}

void PsReporter::shardRecovered(std::uint32_t worker, const SliceValues& slice,
                                std::uint64_t fromStep, std::uint64_t globalStep,
                                bool completed) {
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  events_.emit(event::recovered(index_, fromStep, globalStep, worker));
  record({Kind::kShardRecovered, 0, worker, slice.generation, globalStep}, slice);
  if (completed) progress_.setState(observe::State::kCompleted);
}

void PsReporter::shardCopyIgnored(std::uint32_t worker, std::uint64_t copyStep,
                                  std::uint64_t globalStep) {
  log::logger("ps")->info(
      "PS {}: ignored {}'s copy of the shard at global step {}: the shard is at global step {}",
      index_, observe::workerPeer(worker), copyStep, globalStep);
}

void PsReporter::cutFrozen(std::uint64_t generation, const SliceValues& frozen,
                           std::uint64_t globalStep) {
  events_.emit(event::cutFrozen(index_, generation, globalStep));
  record({Kind::kCutFrozen, 0, 0, generation, globalStep, 0, 0, frozen.generation}, frozen);
}

void PsReporter::cutInstalled(const ps::CutPosition& cut, std::uint64_t globalStep,
                              std::uint64_t checksum) {
  const auto& range = cut.range;
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
  progress_.setCut({cut.generation, cut.psCount, cut.index, range.offset, range.count});
  events_.emit(event::cutServed(index_, cut.generation, cut.psCount, cut.index, range.offset,
                                range.count, globalStep));
  record({Kind::kCutInstalled, std::uint16_t(range.count == 0 ? observe::kHistoryOutOfRun : 0),
          std::uint32_t(cut.index), cut.generation, globalStep, 0, 0,
          std::uint64_t(cut.psCount)},
         SliceValues::of(cut, checksum));
}

void PsReporter::cutThawed(const SliceValues& slice, std::uint64_t globalStep) {
  events_.emit(event::cutThawed(index_, slice.generation, globalStep));
  record({Kind::kCutThawed, 0, 0, slice.generation, globalStep}, slice);
}

void PsReporter::checkpointWritten(const SliceValues& slice, std::uint64_t globalStep,
                                   const std::string& path) {
  events_.emit(event::checkpoint(index_, globalStep, path));
  record({Kind::kCheckpointWritten, 0, 0, slice.generation, globalStep, 0, 0,
          observe::historyPathHash(path)},
         slice);
}

void PsReporter::serving(const ps::CutPosition& cut, std::uint64_t globalStep, bool completed) {
  progress_.setCut({cut.generation, cut.psCount, cut.index, cut.range.offset, cut.range.count});
  progress_.setState(completed ? observe::State::kCompleted : observe::State::kTraining);
  const auto out = cut.range.count == 0 ? observe::kHistoryOutOfRun : 0;
  record({Kind::kServing, std::uint16_t(historyFlag(completed) | out), std::uint32_t(cut.index),
          cut.generation, globalStep, 0, 0, std::uint64_t(cut.psCount)});
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
  record({Kind::kWorkerJoined, 0, worker, 0, globalStep});
}

void PsReporter::workerLeft(std::uint32_t worker) {
  workers_.left(worker);
  record({Kind::kWorkerLeft, 0, worker});
}

void PsReporter::pulled(std::uint64_t globalStep, double seconds) {
  meters_.observePullSeconds(seconds);
  record({Kind::kPullAnswered, 0, 0, 0, globalStep});
}

void PsReporter::pushed(std::uint32_t worker, std::uint64_t localStep, double seconds) {
  meters_.observePushSeconds(seconds);
  workers_.stepped(worker, localStep);
}

void PsReporter::pushApplied(const AppliedPush& push) {
  record({Kind::kPushApplied,
          std::uint16_t(historyFlag(push.closedStep) | push.lag << observe::kHistoryLagShift),
          push.worker, push.generation,
          push.globalStep, push.incarnation, push.pushNumber, push.staleness});
  meters_.observeStaleness(double(push.staleness));
  std::lock_guard<std::mutex> lock(mutex_);
  stalenessSum_ += push.staleness;
  ++stalenessCount_;
}

void PsReporter::pushRefused(std::uint32_t worker, std::uint64_t incarnation,
                             std::uint64_t pushNumber, std::uint64_t generation,
                             std::uint64_t globalStep, Refusal why) {
  record({Kind::kPushRefused, std::uint16_t(why), worker, generation, globalStep, incarnation,
          pushNumber});
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
  log::flush();  // the run's end, at once
}

void PsReporter::loaded(const ps::ShardRange& range, size_t parameterCount,
                        const std::string& description) {
  events_.emit(event::loaded(index_, range.offset, range.count, parameterCount, description));
}

void PsReporter::checkpointIgnored(const std::string& path, std::uint64_t otherRun,
                                   std::uint64_t runId) {
  events_.emit(event::checkpointIgnored(index_, path, otherRun, runId));
}

void PsReporter::checkpointFailed(const std::string& what) {
  events_.emit(event::checkpointFailed(index_, what));
}

void PsReporter::workerFinished(std::uint32_t worker, std::uint64_t localSteps) {
  events_.emit(event::finished(index_, worker, localSteps));
  workers_.finished(worker, localSteps);
}

void PsReporter::rejected(const std::string& address, const std::string& reason) {
  ++meters_.rejectedConnections;
  events_.emit(event::rejected(address, reason));
}

void PsReporter::sessionEnded(const std::string& peer, const std::string& reason, bool failed) {
  events_.emit(event::sessionEnded(peer, reason, failed));
}

void PsReporter::listenerFailed(const std::string& what) {
  events_.emit(event::listenerFailed(what));
}

}  // namespace pstrain::app
