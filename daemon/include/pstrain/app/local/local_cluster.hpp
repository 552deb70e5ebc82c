#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/app/local/child.hpp"
#include "pstrain/app/local/child_planner.hpp"
#include "pstrain/app/local/ps_hosts.hpp"
#include "pstrain/app/local/run_watch.hpp"
#include "pstrain/app/local/scale_queue.hpp"
#include "pstrain/app/local/supervisor.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/observe/events.hpp"

namespace pstrain::app::local {

// Every ps and worker of a run as a child process on loopback, as Kubernetes runs them in two
// StatefulSets: each child keeps its name, ports and log dir; the Supervisor starts one that
// dies again; scale signals (ScaleQueue) add and remove workers, and add and remove ps in the
// list the children read (PsHosts), over which worker 0 re-cuts the parameters.
class LocalCluster {
 public:
  struct Plan {
    std::string self;               // this binary
    std::vector<std::string> args;  // the user's flags, given to every child
    config::Config settings;
    std::vector<int> psFronts;  // where the workers reach ps i (--ps-fronts), if given
    // With it, the workers beyond those that compute at once read a plain copy of the data set
    // written there.
    std::optional<std::string> dataCopy;
  };

  // Plans the children; starts none.
  LocalCluster(Plan plan, observe::Events& events);
  ~LocalCluster() { stop(); }

  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // Whether some worker reads the plain copy of the data set, which must then be written.
  bool readsDataCopy() const;
  // What a termination signal does: stop every child, and start none after. For the signal
  // thread, which may run it at any time, even once the cluster is gone.
  std::function<void()> stopper() const;

  // Starts the children, those that read the data set's copy once `dataCopy` is ready, and takes
  // scale signals from now on.
  void start(std::future<void> dataCopy);
  // Keeps the children running and scales them on signal until worker 0 has written the result
  // of run `runId` to `resultPath`; throws ExitError when a child cannot be kept running, and
  // the data copy's DataError.
  Summary awaitResult(const std::string& resultPath, const std::string& runId);
  // Stops every child (SIGTERM, then SIGKILL after 5 s).
  void stop() const { stopper()(); }

  // Where worker 0 answers HTTP: its page.
  int chiefHttpPort() const;
  // The events.jsonl of every child that has started.
  std::vector<std::string> eventLogs() const;

 private:
  // The children, shared with the thread that takes termination signals, so that Ctrl-C stops
  // them too. Once it has begun to stop them, none is started again: a child restarted then
  // would outlive the stop long enough to restore its checkpoint and write to its log dir.
  struct Shared {
    std::mutex mutex;  // held to start, poll or stop a child's process
    bool stopping = false;
    std::vector<Child> children;
  };

  void startLocked(Child& child, Clock::time_point now);
  void startReaders(Clock::time_point now);
  void supervise(Clock::time_point now);
  void scale(Clock::time_point now);
  void addWorker(Clock::time_point now);
  void removeWorker();
  void addPs(Clock::time_point now);
  void removePs();
  void stopLeavingPs(Clock::time_point now);
  std::vector<Child>::iterator named(const std::string& name);

  config::Config settings_;
  PsHosts psHosts_;
  ChildPlanner planner_;
  std::shared_ptr<Shared> shared_;
  observe::Events& events_;
  Supervisor supervisor_;
  ScaleQueue scaleQueue_;
  // A ps taken out of the list: it is stopped once worker 0 has cut it out of the run, however
  // long that takes, and started again if it dies before: until then its slice may be the only
  // one (if worker 0 was started again meanwhile).
  struct Leaving {
    std::string host;  // its place in the list, given back if a ps is added before it is out
    CutWatch cut;
  };
  std::map<std::string, Leaving> leaving_;  // by child name
  std::future<void> dataCopy_;
};

}  // namespace pstrain::app::local
