#pragma once

#include <chrono>
#include <optional>

namespace pstrain::app {

// When `pstrain local` starts a child that exited again: the kubelet's CrashLoopBackOff (10 s
// doubling to 5 min, reset after 10 min of running), scaled to processes on one machine, with
// the child's global steps as the sign that it works.
// - A run that made no global step since its start, and did not stay at its work (training or
//   completed) for kSteadyRun, doubles the delay, up to the cap. A worker reports `training` as
//   soon as it connects: one that connects and dies at once, every time, is started every 4 s
//   after five such runs (in about 5 s), not every 0.25 s without end.
// - The delay returns to the first only after a run that made steps, or stayed at its work for
//   kSteadyRun (one that waits for a ps that is down is no crash): killing a child that works
//   costs time, never the run, however often it comes. Short beside the kubelet's 10 min, as the
//   steps already tell a working child from a crashing one, and a child killed at random (the
//   OOM killer, a test) must not wait the cap each time.
// A child that exits by itself without working five times in a row (a corrupt checkpoint, an HTTP
// port taken) would only fail again, as would one that reports a configuration or data error at
// once: it is not started again. A kill by a signal (kill -9, the OOM killer) and a full disk
// (exit code 7) are not counted: they say nothing of the next start.
class RestartBackoff {
 public:
  using Delay = std::chrono::milliseconds;
  static constexpr Delay kFirstDelay{250};
  static constexpr Delay kMaxDelay{4000};
  static constexpr std::chrono::seconds kSteadyRun{1};
  static constexpr int kFailedStartsToGiveUp = 5;

  // What one run of the child did.
  struct Run {
    int status = 0;          // how it ended: 128 + signal when killed by one
    bool madeSteps = false;  // global steps since its start
    std::chrono::steady_clock::duration atWork{};  // since it first reported its work
  };

  // The run ended: how long to wait before starting the next, or nothing when the child is not
  // to be started again.
  std::optional<Delay> exited(const Run& run);

  // Whether that exit raised the delay to the cap: the child keeps dying without working.
  bool reachedCap() const { return reachedCap_; }
  // The runs in a row, up to that exit, that did not work (made no step, left their work soon).
  int steplessRuns() const { return steplessRuns_; }

 private:
  std::optional<Delay> last_;  // the delay given at the previous exit
  int failedStarts_ = 0;       // in a row, the child's own exits from runs that did not work
  int steplessRuns_ = 0;
  bool reachedCap_ = false;
};

}  // namespace pstrain::app
