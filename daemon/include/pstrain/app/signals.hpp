#pragma once

#include <functional>

namespace pstrain::app {

// Routes SIGTERM and SIGINT to one thread that runs the termination hooks, then
// `onSignal(signal)`, flushes the logs and exits the process with the code `onSignal` returns.
// Call before starting any other thread, so every thread inherits the blocked signals.
void handleTerminationSignals(std::function<int(int signal)> onSignal);

// Adds work to do before a signalled exit (a last checkpoint); hooks run newest first.
void addTerminationHook(std::function<void()> hook);

// Blocks the calling thread until a termination signal ends the process.
[[noreturn]] void idleUntilTerminated();

}  // namespace pstrain::app
