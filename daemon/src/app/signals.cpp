#include "pstrain/app/signals.hpp"

#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::app {
namespace {

// The one state the handler reaches.
int signalPipe[2] = {-1, -1};

// A handler, not only a blocked signal: threads that libraries start before main (OpenBLAS
// starts its pool when it is loaded) cannot have inherited the blocked signals, and the kernel
// may deliver SIGTERM to one of them, where its default action would end the process at once.
// The handler only passes the signal on to the thread below (write is async-signal-safe).
void forwardSignal(int signal) {
  const auto byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] auto written = write(signalPipe[1], &byte, 1);
}

}  // namespace

TerminationSignals::TerminationSignals(std::function<int(int signal)> onSignal) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  if (pipe2(signalPipe, O_CLOEXEC) != 0) throw IoError("cannot create the signal pipe");
  setSignalHandler({SIGTERM, SIGINT}, forwardSignal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals, hooks = hooks_, onSignal = std::move(onSignal)] {
    // The one thread started from here on that takes the signals.
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    unsigned char byte = 0;
    while (read(signalPipe[0], &byte, 1) != 1) {
    }
    const int signal = byte;
    {
      std::lock_guard<std::mutex> lock(hooks->mutex);
      for (auto hook = hooks->hooks.rbegin(); hook != hooks->hooks.rend(); ++hook) {
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

void setSignalHandler(std::initializer_list<int> signals, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int signal : signals) sigaction(signal, &action, nullptr);
}

void TerminationSignals::addHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(hooks_->mutex);
  hooks_->hooks.push_back(std::move(hook));
}

void idleUntilTerminated() {
  for (;;) pause();
}

}  // namespace pstrain::app
