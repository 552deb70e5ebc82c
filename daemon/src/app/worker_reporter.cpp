#include "pstrain/app/worker_reporter.hpp"

#include <limits>

#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"

namespace pstrain::app {
namespace {

std::string psPeer(const net::Endpoint& ps) { return "ps " + ps.toString(); }

}  // namespace

WorkerReporter::WorkerReporter(int index, int logEverySteps, observe::Metrics& metrics)
    : index_(index), logEverySteps_(logEverySteps), metrics_(metrics) {}

void WorkerReporter::connected(const net::Endpoint& ps, const net::Welcome& welcome) {
  metrics_.setPsHttp({ps.toString(), ps.host, int(welcome.httpPort)});
  log::logger("worker")->info(
      "Worker {}: connected to ps {} (parameters [{}, {}), global step {})", index_,
      ps.toString(), welcome.offset, welcome.offset + welcome.count, welcome.globalStep);
  metrics_.events().connected(psPeer(ps), welcome.globalStep);
  std::lock_guard<std::mutex> lock(mutex_);
  peers_.push_back(psPeer(ps));
  metrics_.setPeers(peers_);
}

void WorkerReporter::lost(const net::Endpoint& ps, const std::string& reason) {
  log::logger("worker")->warn("Worker {}: lost ps {} ({}); reconnecting", index_, ps.toString(),
                              reason);
  metrics_.events().lost(psPeer(ps), reason);
  ++metrics_.reconnects;
}

void WorkerReporter::reconnected(const net::Endpoint& ps, const net::Welcome& welcome,
                                 std::uint64_t globalStep) {
  metrics_.setPsHttp({ps.toString(), ps.host, int(welcome.httpPort)});
  log::logger("worker")->info("Worker {}: reconnected to ps {} at global step {}", index_,
                              ps.toString(), globalStep);
  metrics_.events().reconnected(psPeer(ps), globalStep);
}

void WorkerReporter::divided(std::uint32_t rank, std::uint32_t workers,
                             const worker::Slice& slice, size_t total) {
  log::logger("worker")->info(
      "Worker {}: training on examples [{}, {}) of {}: part {} of {}, one for each worker connected",
      index_, slice.begin, slice.end, total, rank, workers);
  metrics_.events().divided(rank, workers, slice.begin, slice.end);
}

void WorkerReporter::training() { metrics_.setState(observe::State::kTraining); }

void WorkerReporter::pulled(double seconds) { metrics_.pullSeconds().Observe(seconds); }

void WorkerReporter::exchanged(double seconds) { metrics_.pushSeconds().Observe(seconds); }

void WorkerReporter::stepDone(std::uint64_t localStep, std::uint64_t globalStep, float loss) {
  metrics_.recordStep(globalStep, loss);
  metrics_.recordLocalStep(localStep);
  if (localStep % std::uint64_t(logEverySteps_) == 0) {
    log::logger("worker")->info("Worker {}: training step {} done (global step: {})", index_,
                                localStep, globalStep);
    metrics_.events().workerStep(localStep, globalStep, loss);
  }
}

void WorkerReporter::evaluated(std::uint64_t localStep, std::uint64_t globalStep,
                               double accuracy, double takenAt) {
  log::logger("worker")->info("Accuracy at local step {}: {:.4f}", localStep, accuracy);
  metrics_.events().accuracy(localStep, globalStep, accuracy, takenAt);
  metrics_.recordAccuracy(accuracy);
}

void WorkerReporter::trainingEnded(double elapsedSeconds) {
  auto logger = log::logger("worker");
  logger->info("Training ends @ {:.6f}", unixTime());
  logger->info("Training elapsed time: {:.6f} s", elapsedSeconds);
}

void WorkerReporter::done(std::uint64_t globalStep, double elapsedSeconds,
                          std::optional<double> accuracy) {
  metrics_.events().done(globalStep, elapsedSeconds, accuracy);
  metrics_.recordStep(globalStep, std::numeric_limits<float>::quiet_NaN());
}

}  // namespace pstrain::app
