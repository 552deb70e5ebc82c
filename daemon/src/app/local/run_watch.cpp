#include "pstrain/app/local/run_watch.hpp"

#include "pstrain/common/error.hpp"
#include "pstrain/observe/event.hpp"
#include "pstrain/observe/status_client.hpp"

namespace pstrain::app::local {
namespace {

// Whether asking is due at `now`; if so, when it is due next.
bool due(Clock::time_point now, Clock::time_point& next, std::chrono::milliseconds every) {
  if (now < next) return false;
  next = now + every;
  return true;
}

// The child's /status, or nothing while it does not answer (not serving yet, or gone). Children
// answer on loopback at once unless stopped (SIGSTOP): the launcher's loop waits no longer than
// a quarter of a second for one.
std::optional<observe::StatusSnapshot> statusOf(int httpPort) {
  try {
    return observe::fetchStatus("127.0.0.1", httpPort, 0.25);
  } catch (const PeerError&) {
    return std::nullopt;
  }
}

}  // namespace

RunWatch::RunWatch(int httpPort, Clock::time_point startedAt)
    : port_(httpPort), next_(startedAt) {}

void RunWatch::poll(Clock::time_point now) {
  if (madeSteps_ || port_ == 0 || !due(now, next_, kPollEvery)) return;
  const auto status = statusOf(port_);
  if (!status || status->state == observe::stateName(observe::State::kWaiting)) return;
  if (!atWorkSince_) {
    atWorkSince_ = now;
    firstStep_ = status->globalStep;
  } else {
    madeSteps_ = status->globalStep > firstStep_;
  }
}

Clock::duration RunWatch::atWork(Clock::time_point now) const {
  return atWorkSince_ ? now - *atWorkSince_ : Clock::duration::zero();
}

bool CutWatch::outOfRun(Clock::time_point now) {
  if (out_ || !due(now, next_, kPollEvery)) return out_;
  const auto status = statusOf(port_);
  out_ = status && status->cutCount == std::uint64_t(0);
  return out_;
}

}  // namespace pstrain::app::local
