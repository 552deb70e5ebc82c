#include "pstrain/app/signals.hpp"

#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

#include "pstrain/common/log.hpp"

namespace pstrain::app {
namespace {

std::mutex hooksMutex;
std::vector<std::function<void()>> hooks;

}  // namespace

void handleTerminationSignals(std::function<int(int signal)> onSignal) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals, onSignal = std::move(onSignal)] {
    int signal = 0;
    sigwait(&signals, &signal);
    {
      std::lock_guard<std::mutex> lock(hooksMutex);
      for (auto hook = hooks.rbegin(); hook != hooks.rend(); ++hook) {
        try {
          (*hook)();
        } catch (const std::exception& e) {
          log::logger("app")->error("while stopping: {}", e.what());
        }
      }
    }
    int code = onSignal(signal);
    log::flush();
    // Other threads may be blocked on sockets; ending the process here is the clean stop.
    std::_Exit(code);
  }).detach();
}

void addTerminationHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(hooksMutex);
  hooks.push_back(std::move(hook));
}

void idleUntilTerminated() {
  for (;;) pause();
}

}  // namespace pstrain::app
