#pragma once

#include <functional>
#include <initializer_list>

namespace pstrain::app {

// Routes SIGTERM and SIGINT to one thread that runs the termination hooks, then
// `onSignal(signal)`, flushes the logs and exits the process with the code `onSignal` returns.
// Call before starting any other thread, so every thread inherits the blocked signals.
void handleTerminationSignals(std::function<int(int signal)> onSignal);

// Runs `handler` on each of `signals`, restarting the system calls they interrupt. The handler
// may do only async-signal-safe work (a write, an atomic counter).
void setSignalHandler(std::initializer_list<int> signals, void (*handler)(int));

// Adds work to do before a signalled exit (a last checkpoint); hooks run newest first.
void addTerminationHook(std::function<void()> hook);

// Blocks the calling thread until a termination signal ends the process.
[[noreturn]] void idleUntilTerminated();

}  // namespace pstrain::app
