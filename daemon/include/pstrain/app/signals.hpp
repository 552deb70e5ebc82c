#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <vector>

namespace pstrain::app {

// SIGTERM and SIGINT, routed to one thread that runs the hooks added here (newest first, such as
// a last checkpoint), then `onSignal(signal)`, flushes the logs and exits the process with the
// code `onSignal` returns. Make one before starting any other thread, so every thread inherits
// the blocked signals, and keep it for the life of the process.
class TerminationSignals {
 public:
  explicit TerminationSignals(std::function<int(int signal)> onSignal);
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  // Adds work to do before a signalled exit.
  void addHook(std::function<void()> hook);

 private:
  struct Hooks {
    std::mutex mutex;
    std::vector<std::function<void()>> hooks;
  };
  // Shared with the thread that takes the signals.
  const std::shared_ptr<Hooks> hooks_ = std::make_shared<Hooks>();
};

// Runs `handler` on each of `signals`, restarting the system calls they interrupt. The handler
// may do only async-signal-safe work (a write, an atomic counter).
void setSignalHandler(std::initializer_list<int> signals, void (*handler)(int));

// Blocks the calling thread until a termination signal ends the process.
[[noreturn]] void idleUntilTerminated();

}  // namespace pstrain::app
