#pragma once

#include <chrono>

namespace pstrain::app::local {

// Shows worker 0's progress: on a terminal one line rewritten in place a few times a second,
// elsewhere (CI logs, files) a log line, with its time, every ten seconds from the start.
class ProgressReporter {
 public:
  explicit ProgressReporter(int chiefHttpPort);
  // Clears the terminal's line, however the launcher's loop ends.
  ~ProgressReporter() { finish(); }

  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Shows the progress if it is due.
  void update();
  // Clears the line shown on a terminal, before other output.
  void finish();

 private:
  static constexpr std::chrono::milliseconds kTerminalPeriod{250};
  static constexpr std::chrono::seconds kPlainPeriod{10};

  int port_;
  bool terminal_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point next_;
};

}  // namespace pstrain::app::local
