#include "pstrain/app/signals.hpp"

#include <csignal>
#include <cstdlib>
#include <thread>

#include <unistd.h>

#include "pstrain/common/log.hpp"

namespace pstrain::app {

void handleTerminationSignals(std::function<int(int signal)> onSignal) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals, onSignal = std::move(onSignal)] {
    int signal = 0;
    sigwait(&signals, &signal);
    int code = onSignal(signal);
    log::flush();
    // Other threads may be blocked on sockets; ending the process here is the clean stop.
    std::_Exit(code);
  }).detach();
}

void idleUntilTerminated() {
  for (;;) pause();
}

}  // namespace pstrain::app
