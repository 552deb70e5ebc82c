#include "pstrain/app/worker_reporter.hpp"

#include <limits>

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

void WorkerReporter::recut(std::uint64_t generation, int fromPs, int toPs,
                           std::uint64_t globalStep, std::uint64_t movedState,
                           std::uint64_t lostState, const std::string& unreached) {
  events_.emit(
      event::recut(generation, fromPs, toPs, globalStep, movedState, lostState, unreached));
  if (!history_) return;
  history_->record({observe::HistoryKind::kRecut, observe::historyFlag(!unreached.empty()),
                    std::uint32_t(toPs), generation, globalStep, 0, 0, lostState});
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

void WorkerReporter::divided(std::uint32_t rank, std::uint32_t workers,
                             const worker::Slice& slice, size_t total) {
  events_.emit(event::divided(index_, rank, workers, slice.begin, slice.end, total));
}

void WorkerReporter::training() { progress_.setState(observe::State::kTraining); }

void WorkerReporter::pulled(double seconds) { meters_.pullSeconds().Observe(seconds); }

void WorkerReporter::exchanged(double seconds) { meters_.pushSeconds().Observe(seconds); }

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

void WorkerReporter::trainingEnded(std::uint64_t globalStep, double elapsedSeconds) {
  events_.emit(event::done("worker", globalStep, elapsedSeconds));
}

void WorkerReporter::done(std::uint64_t globalStep) {
  progress_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
}

}  // namespace pstrain::app
