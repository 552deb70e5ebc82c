#include "pstrain/app/worker_reporter.hpp"

#include <limits>

#include "pstrain/worker/trainer.hpp"

namespace pstrain::app {

namespace event = observe::event;

WorkerReporter::WorkerReporter(int index, int logEverySteps, observe::Progress& progress,
                               observe::Meters& meters, observe::Events& events)
    : index_(index),
      logEverySteps_(logEverySteps),
      progress_(progress),
      meters_(meters),
      events_(events) {}

void WorkerReporter::connected(const net::Endpoint& ps, const net::Welcome& welcome) {
  progress_.setPsHttp({ps.toString(), ps.host, int(welcome.httpPort)});
  events_.emit(event::psConnected(index_, ps.toString(), welcome.offset, welcome.count,
                                  welcome.globalStep));
  std::lock_guard<std::mutex> lock(mutex_);
  peers_.push_back(observe::psPeer(ps.toString()));
  progress_.setPeers(peers_);
}

void WorkerReporter::lost(const net::Endpoint& ps, const std::string& reason) {
  events_.emit(event::lost(index_, ps.toString(), reason));
  ++meters_.reconnects;
}

void WorkerReporter::reconnected(const net::Endpoint& ps, const net::Welcome& welcome,
                                 std::uint64_t globalStep) {
  progress_.setPsHttp({ps.toString(), ps.host, int(welcome.httpPort)});
  events_.emit(event::reconnected(index_, ps.toString(), globalStep));
}

void WorkerReporter::recut(const ps::RecutOutcome& outcome) {
  events_.emit(event::recut(outcome.generation, outcome.fromPs, outcome.toPs, outcome.globalStep,
                            outcome.movedState, outcome.lostState, outcome.unreached));
  if (!history_) return;
  history_->record({observe::HistoryKind::kRecut, observe::historyFlag(!outcome.unreached.empty()),
                    std::uint32_t(outcome.toPs), outcome.generation, outcome.globalStep, 0, 0,
                    outcome.lostState, 0, outcome.movedState + outcome.lostState,
                    outcome.checksum});
}

void WorkerReporter::recutIncomplete(const std::string& reason) {
  events_.emit(event::recutIncomplete(reason));
}

void WorkerReporter::waiting(const net::Endpoint& ps, int attempt, const std::string& reason) {
  events_.emit(event::waiting(ps.toString(), attempt, reason));
}

void WorkerReporter::pushSent(std::uint64_t generation, std::uint64_t pushNumber,
                              std::uint64_t localStep, std::uint64_t basedOn) {
  if (!history_) return;
  history_->record({observe::HistoryKind::kPushSent, 0, 0, generation, basedOn,
                    history_->header().incarnation, pushNumber, localStep});
}

void WorkerReporter::answered(int psIndex, std::uint64_t generation, std::uint64_t pushNumber,
                              bool applied, std::uint64_t globalStep) {
  if (!history_) return;
  history_->record({observe::HistoryKind::kAnswered, observe::historyFlag(applied),
                    std::uint32_t(psIndex), generation, globalStep, 0, pushNumber});
}

void WorkerReporter::goodbyeFailed(const net::Endpoint& ps, const std::string& reason) {
  events_.emit(event::goodbyeFailed(index_, ps.toString(), reason));
}

void WorkerReporter::divided(std::uint32_t rank, std::uint32_t workers,
                             const worker::Slice& slice, size_t total) {
  events_.emit(event::divided(index_, rank, workers, slice.begin, slice.end, total));
}

void WorkerReporter::training(const worker::TrainingPlan& plan) {
  progress_.setState(observe::State::kTraining);
  events_.emit(event::trainingPlan(index_, plan.examples, plan.batchSize, plan.trainSteps,
                                   plan.factoredLayers, plan.layers));
}

void WorkerReporter::pulled(double seconds) { meters_.observePullSeconds(seconds); }

void WorkerReporter::exchanged(double seconds) { meters_.observePushSeconds(seconds); }

void WorkerReporter::stepDone(std::uint64_t localStep, std::uint64_t globalStep, float loss) {
  progress_.recordStep(globalStep, loss);
  progress_.recordLocalStep(localStep);
  if (localStep % std::uint64_t(logEverySteps_) == 0) {
    events_.emit(event::workerStep(index_, globalStep, localStep, loss));
  }
}

void WorkerReporter::evaluated(std::uint64_t localStep, std::uint64_t globalStep,
                               double accuracy, double takenAt) {
  events_.emit(event::accuracy(localStep, globalStep, accuracy, takenAt));
  progress_.recordAccuracy(accuracy);
}

void WorkerReporter::trainingEnded(const worker::TrainingResult& result) {
  if (result.localSteps > 0) {
    const auto cost = result.perStep();
    events_.emit(event::stepCosts(index_, cost.computeMs, cost.communicationMs, cost.waitingMs,
                                  cost.bytes));
  }
  events_.emit(event::done("worker", result.globalStep, result.elapsedSeconds));
}

void WorkerReporter::done(std::uint64_t globalStep) {
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
}

}  // namespace pstrain::app
