#include "pstrain/app/restart_backoff.hpp"

#include <algorithm>

#include "pstrain/common/error.hpp"

namespace pstrain::app {

std::optional<RestartBackoff::Delay> RestartBackoff::exited(const Run& run) {
  reachedCap_ = false;
  if (run.status == kExitConfig || run.status == kExitData) return std::nullopt;
  if (run.madeSteps || run.atWork >= kSteadyRun) {
    failedStarts_ = 0;
    steplessRuns_ = 0;
    last_ = kFirstDelay;
    return last_;
  }
  ++steplessRuns_;
  if (run.status < 128 && run.status != kExitDiskFull && ++failedStarts_ == kFailedStartsToGiveUp) {
    return std::nullopt;
  }
  const Delay next = last_ ? std::min(2 * *last_, kMaxDelay) : kFirstDelay;
  reachedCap_ = next == kMaxDelay && last_ != kMaxDelay;
  last_ = next;
  return next;
}

}  // namespace pstrain::app
