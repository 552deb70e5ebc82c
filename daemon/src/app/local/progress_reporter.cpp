#include "pstrain/app/local/progress_reporter.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/observe/status_client.hpp"

namespace pstrain::app::local {

ProgressReporter::ProgressReporter(int chiefHttpPort)
    : port_(chiefHttpPort),
      terminal_(::isatty(STDOUT_FILENO) == 1),
      next_(std::chrono::steady_clock::now() + (terminal_ ? kTerminalPeriod : kPlainPeriod)) {}

void ProgressReporter::update() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  std::string line;
  try {
    line = observe::describeProgress(observe::fetchStatus("127.0.0.1", port_, 0.5));
  } catch (const PeerError&) {
    return;  // worker 0 is not serving yet: asked again at the next poll
  }
  if (terminal_) {
    std::printf("\r\033[K%s", line.c_str());
    std::fflush(stdout);
    shown_ = true;
    next_ = now + kTerminalPeriod;
    return;
  }
  log::logger("local")->info("{}", line);
  log::flush();
  // On the ten-second marks from the start, however long worker 0 took to answer.
  while (next_ <= now) next_ += kPlainPeriod;
}

void ProgressReporter::finish() {
  if (shown_) std::printf("\r\033[K");
  shown_ = false;
  std::fflush(stdout);
}

}  // namespace pstrain::app::local
