#include "pstrain/app/restart_backoff.hpp"

#include <algorithm>

#include "pstrain/common/error.hpp"

namespace pstrain::app {

std::optional<RestartBackoff::Delay> RestartBackoff::exited(int status) {
  if (status == kExitConfig || status == kExitData) return std::nullopt;
  if (atWork_) {
    failedStarts_ = 0;
    delay_ = kFirstDelay;
  } else if (status < 128 && ++failedStarts_ == kFailedStartsToGiveUp) {
    // A signal (kill -9, the OOM killer) is not counted: it says nothing of the next start.
    return std::nullopt;
  }
  atWork_ = false;
  const auto delay = delay_;
  delay_ = std::min(2 * delay_, kMaxDelay);
  return delay;
}

}  // namespace pstrain::app
