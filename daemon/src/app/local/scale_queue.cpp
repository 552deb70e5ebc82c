#include "pstrain/app/local/scale_queue.hpp"

#include <atomic>
#include <csignal>

#include "pstrain/app/signals.hpp"

namespace pstrain::app::local {
namespace {

// Reached by the signal handler, which can reach nothing else.
std::atomic<int> workersToAdd{0};
std::atomic<int> workersToRemove{0};
std::atomic<int> psToAdd{0};
std::atomic<int> psToRemove{0};

void countScaleSignal(int signal) {
  if (signal == SIGUSR1) workersToAdd.fetch_add(1);
  if (signal == SIGUSR2) workersToRemove.fetch_add(1);
  if (signal == SIGRTMIN) psToAdd.fetch_add(1);
  if (signal == SIGRTMIN + 1) psToRemove.fetch_add(1);
}

}  // namespace

void ScaleQueue::listen() {
  setSignalHandler({SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMIN + 1}, countScaleSignal);
}

ScaleQueue::Requests ScaleQueue::take() {
  return {workersToAdd.exchange(0), workersToRemove.exchange(0), psToAdd.exchange(0),
          psToRemove.exchange(0)};
}

}  // namespace pstrain::app::local
