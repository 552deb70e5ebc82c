#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace pstrain::app::local {

using Clock = std::chrono::steady_clock;

// What one run of a child has shown of its work, asked of its /status while it runs (never read
// from its files): since when it has reported its work (training or completed), and whether its
// global step has risen since then, that is, whether it made global steps since its start. A
// worker reports `training` as soon as it connects, so that alone is no sign of work. Asked
// every kPollEvery until the run has made steps, then no more: the answer cannot change back,
// and a cluster that trains costs the launcher no requests.
class RunWatch {
 public:
  static constexpr std::chrono::milliseconds kPollEvery{50};

  RunWatch() = default;
  RunWatch(int httpPort, Clock::time_point startedAt);

  // Asks the child's /status when due.
  void poll(Clock::time_point now);
  bool madeSteps() const { return madeSteps_; }
  // How long it has been at its work by `now`: zero if it never reported it.
  Clock::duration atWork(Clock::time_point now) const;

 private:
  int port_ = 0;
  Clock::time_point next_{};
  std::optional<Clock::time_point> atWorkSince_;
  std::uint64_t firstStep_ = 0;  // at its first answer at work
  bool madeSteps_ = false;
};

// Whether a ps taken out of the list has been cut out of the run: worker 0 re-cut the parameters
// without it, and its /status says its cut serves none. Asked every kPollEvery.
class CutWatch {
 public:
  static constexpr std::chrono::milliseconds kPollEvery{100};

  explicit CutWatch(int httpPort) : port_(httpPort) {}

  bool outOfRun(Clock::time_point now);

 private:
  int port_;
  Clock::time_point next_{};
  bool out_ = false;
};

}  // namespace pstrain::app::local
