#include "pstrain/app/local/child.hpp"

#include <csignal>
#include <fstream>

#include "pstrain/common/failpoint.hpp"

namespace pstrain::app::local {

namespace {
constexpr std::chrono::milliseconds kStopGrace{5000};
}  // namespace

Child::Child(ChildSpec spec, bool readsCopy) : spec_(std::move(spec)), readsCopy_(readsCopy) {}

void Child::start() {
  // A fault drill's failpoints act on a child's first start: started again, it would hit them
  // again, and a drill's one fault would become a crash loop.
  std::vector<std::string> unset;
  if (starts_++ > 0) unset.emplace_back(failpoint::kVariable);
  process_ = std::make_unique<ChildProcess>(spec_.argv, "/dev/null", spec_.dir + "/stderr.log",
                                            unset);
}

void Child::askToStop() {
  if (process_ && !process_->poll()) ::kill(process_->pid(), SIGTERM);
}

void Child::finishStop() {
  if (process_) process_->stop(kStopGrace);
}

void Child::readOriginal() {
  if (!readsCopy_) return;
  spec_.argv.resize(spec_.argv.size() - 2);  // the copy's --data-dir, last (ChildPlanner)
  readsCopy_ = false;
}

void Child::remove() {
  readsCopy_ = false;  // a reader not started yet is not started later
  finishStop();
  process_.reset();
}

std::string Child::lastErrorLine() const {
  std::ifstream in(spec_.dir + "/stderr.log");
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace pstrain::app::local
