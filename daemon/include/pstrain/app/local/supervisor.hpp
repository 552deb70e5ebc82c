#pragma once

#include <map>
#include <optional>
#include <string>

#include "pstrain/app/local/child.hpp"
#include "pstrain/app/local/run_watch.hpp"
#include "pstrain/app/restart_backoff.hpp"
#include "pstrain/observe/events.hpp"

namespace pstrain::app::local {

// Keeps the children running, as the kubelet keeps a pod's containers: a child that exits is
// started again, the same child (name, ports, log dir), after the delay its RestartBackoff
// gives for what the run did; the launcher records each restart (`restarted`), and says once
// when a child that keeps dying before it makes a step has backed off to the cap
// (`crash_loop`). Not thread-safe: the launcher's loop calls it.
class Supervisor {
 public:
  explicit Supervisor(observe::Events& events) : events_(events) {}

  // Starts `child` and begins to watch its run.
  void start(Child& child, Clock::time_point now);
  // Asks a running child how its run goes, when due: over HTTP, so without the children's lock.
  void watch(const Child& child, Clock::time_point now);
  // Acts on the child's exit, or starts it again once its delay has passed. Throws ExitError
  // when it is not to be started again.
  void tend(Child& child, Clock::time_point now);
  // A child replaced by a new one of the same name: it starts with no restarts behind it.
  void forget(const std::string& name) { records_.erase(name); }

 private:
  struct Record {
    RestartBackoff backoff;
    int restarts = 0;
    RunWatch run;  // of its current run
    std::optional<Clock::time_point> restartAt;  // once exited, to start again
  };

  void exited(Child& child, Record& record, int status, Clock::time_point now);

  observe::Events& events_;
  std::map<std::string, Record> records_;  // by child name
};

}  // namespace pstrain::app::local
