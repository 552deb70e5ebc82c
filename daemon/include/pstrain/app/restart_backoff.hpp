#pragma once

#include <chrono>
#include <optional>

namespace pstrain::app {

// When `pstrain local` starts a child that exited again: the kubelet's CrashLoopBackOff, scaled
// to processes on one machine. A run that reached its work (it reported a state: training or
// completed) ends with a restart after the first delay, however many came before: killing a
// child that makes progress costs time, never the run. A run that did not doubles the delay (a
// ps killed again while it restores waits a little longer each time), up to a cap. A child that
// exits by itself before reaching its work five times in a row (a corrupt checkpoint, an HTTP
// port taken) would only fail again, as would one that reports a configuration or data error at
// once.
class RestartBackoff {
 public:
  using Delay = std::chrono::milliseconds;
  static constexpr Delay kFirstDelay{250};
  static constexpr Delay kMaxDelay{8000};
  static constexpr int kFailedStartsToGiveUp = 5;

  // The child's current run has reported its work.
  void reachedWork() { atWork_ = true; }
  bool atWork() const { return atWork_; }

  // The current run ended with `status` (128 + signal when killed by one): how long to wait
  // before starting the next, or nothing when the child is not to be started again.
  std::optional<Delay> exited(int status);

 private:
  bool atWork_ = false;
  int failedStarts_ = 0;  // in a row, the child's own exits before reaching its work
  Delay delay_ = kFirstDelay;
};

}  // namespace pstrain::app
