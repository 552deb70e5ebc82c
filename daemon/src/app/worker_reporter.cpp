#include "pstrain/app/worker_reporter.hpp"

#include <limits>

namespace pstrain::app {

namespace event = observe::event;

WorkerReporter::WorkerReporter(int index, int logEverySteps, observe::Metrics& metrics)
    : index_(index), logEverySteps_(logEverySteps), metrics_(metrics) {}

void WorkerReporter::connected(const net::Endpoint& ps, const net::Welcome& welcome) {
  metrics_.setPsHttp({ps.toString(), ps.host, int(welcome.httpPort)});
  metrics_.events().emit(event::psConnected(index_, ps.toString(), welcome.offset, welcome.count,
                                             welcome.globalStep));
  std::lock_guard<std::mutex> lock(mutex_);
  peers_.push_back(observe::psPeer(ps.toString()));
  metrics_.setPeers(peers_);
}

void WorkerReporter::lost(const net::Endpoint& ps, const std::string& reason) {
  metrics_.events().emit(event::lost(index_, ps.toString(), reason));
  ++metrics_.reconnects;
}

void WorkerReporter::reconnected(const net::Endpoint& ps, const net::Welcome& welcome,
                                 std::uint64_t globalStep) {
  metrics_.setPsHttp({ps.toString(), ps.host, int(welcome.httpPort)});
  metrics_.events().emit(event::reconnected(index_, ps.toString(), globalStep));
}

void WorkerReporter::waiting(const net::Endpoint& ps, int attempt, const std::string& reason) {
  metrics_.events().emit(event::waiting(ps.toString(), attempt, reason));
}

void WorkerReporter::divided(std::uint32_t rank, std::uint32_t workers,
                             const worker::Slice& slice, size_t total) {
  metrics_.events().emit(event::divided(index_, rank, workers, slice.begin, slice.end, total));
}

void WorkerReporter::training() { metrics_.setState(observe::State::kTraining); }

void WorkerReporter::pulled(double seconds) { metrics_.pullSeconds().Observe(seconds); }

void WorkerReporter::exchanged(double seconds) { metrics_.pushSeconds().Observe(seconds); }

void WorkerReporter::stepDone(std::uint64_t localStep, std::uint64_t globalStep, float loss) {
  metrics_.recordStep(globalStep, loss);
  metrics_.recordLocalStep(localStep);
  if (localStep % std::uint64_t(logEverySteps_) == 0) {
    metrics_.events().emit(event::workerStep(index_, globalStep, localStep, loss));
  }
}

void WorkerReporter::evaluated(std::uint64_t localStep, std::uint64_t globalStep,
                               double accuracy, double takenAt) {
  metrics_.events().emit(event::accuracy(localStep, globalStep, accuracy, takenAt));
  metrics_.recordAccuracy(accuracy);
}

void WorkerReporter::trainingEnded(std::uint64_t globalStep, double elapsedSeconds) {
  metrics_.events().emit(event::done("worker", globalStep, elapsedSeconds));
}

void WorkerReporter::done(std::uint64_t globalStep) {
  metrics_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
}

}  // namespace pstrain::app
