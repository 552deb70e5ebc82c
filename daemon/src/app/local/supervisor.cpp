#include "pstrain/app/local/supervisor.hpp"

#include "pstrain/common/error.hpp"

namespace pstrain::app::local {
namespace {

double seconds(RestartBackoff::Delay delay) {
  return std::chrono::duration<double>(delay).count();
}

}  // namespace

void Supervisor::start(Child& child, Clock::time_point now) {
  child.start();
  records_[child.name()].run = RunWatch(child.spec().httpPort, now);
}

void Supervisor::watch(const Child& child, Clock::time_point now) {
  if (!child.hasProcess()) return;
  auto record = records_.find(child.name());
  if (record != records_.end() && !record->second.restartAt) record->second.run.poll(now);
}

void Supervisor::tend(Child& child, Clock::time_point now) {
  if (!child.hasProcess()) return;
  auto& record = records_[child.name()];
  if (record.restartAt) {
    if (now < *record.restartAt) return;
    record.restartAt.reset();
    start(child, now);
    return;
  }
  if (const auto status = child.poll()) exited(child, record, *status, now);
}

void Supervisor::exited(Child& child, Record& record, int status, Clock::time_point now) {
  const auto delay =
      record.backoff.exited({status, record.run.madeSteps(), record.run.atWork(now)});
  if (!delay) {
    throw ExitError(child.name() + " exited with status " + std::to_string(status) + ": " +
                        child.lastErrorLine(),
                    status == 0 ? kExitFailure : status);
  }
  // As a StatefulSet would: the same role, index, ports and log dir, after the delay.
  record.restartAt = now + *delay;
  events_.emit(observe::event::restarted(child.name(), status, ++record.restarts, seconds(*delay)));
  if (record.backoff.reachedCap()) {
    events_.emit(observe::event::crashLoop(child.name(), record.backoff.steplessRuns(),
                                           seconds(*delay)));
  }
}

}  // namespace pstrain::app::local
