#include "pstrain/observe/worker_roster.hpp"

namespace pstrain::observe {

void WorkerRoster::joined(std::uint32_t worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& w = workers_[worker];
  ++w.connections;
  w.finished = false;  // a worker that comes back trains again
  w.seen = std::chrono::steady_clock::now();
}

void WorkerRoster::stepped(std::uint32_t worker, std::uint64_t localStep) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& w = workers_[worker];
  w.localStep = localStep;
  w.seen = std::chrono::steady_clock::now();
}

void WorkerRoster::lossOf(std::uint32_t worker, float loss) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!std::isnan(loss)) workers_[worker].loss = loss;
}

void WorkerRoster::finished(std::uint32_t worker, std::uint64_t localSteps) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& w = workers_[worker];
  w.finished = true;
  w.localStep = localSteps;
  w.seen = std::chrono::steady_clock::now();
}

void WorkerRoster::left(std::uint32_t worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  --workers_[worker].connections;
}

std::vector<WorkerRoster::Entry> WorkerRoster::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::vector<Entry> entries;
  for (const auto& [index, w] : workers_) {
    entries.push_back({index,
                       w.finished ? "finished" : w.connections > 0 ? "training" : "disconnected",
                       w.localStep, w.loss, std::chrono::duration<double>(now - w.seen).count()});
  }
  return entries;
}

}  // namespace pstrain::observe
