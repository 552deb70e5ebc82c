#include "pstrain/app/local/local_cluster.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "pstrain/app/local/progress_reporter.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/net/free_ports.hpp"
#include "pstrain/observe/event.hpp"

namespace pstrain::app::local {
namespace {

namespace fs = std::filesystem;

// How often the launcher's loop looks at the children, the scale signals and worker 0's result.
constexpr std::chrono::milliseconds kLoopPeriod{10};

}  // namespace

LocalCluster::LocalCluster(Plan plan, observe::Events& events)
    : settings_(std::move(plan.settings)),
      psHosts_(settings_.logDir + "/ps-hosts"),
      planner_(std::move(plan.self), std::move(plan.args), settings_, psHosts_.path()),
      shared_(std::make_shared<Shared>()),
      events_(events),
      supervisor_(events) {
  shared_->children = planner_.firstChildren(psHosts_, plan.psFronts, plan.dataCopy);
}

bool LocalCluster::readsDataCopy() const {
  return std::any_of(shared_->children.begin(), shared_->children.end(),
                     [](const Child& child) { return child.readsCopy(); });
}

std::function<void()> LocalCluster::stopper() const {
  return [shared = shared_] {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->stopping = true;
    // Every child asked at once, then each waited for.
    for (auto& child : shared->children) child.askToStop();
    for (auto& child : shared->children) child.finishStop();
  };
}

void LocalCluster::start(std::future<void> dataCopy) {
  dataCopy_ = std::move(dataCopy);
  scaleQueue_.listen();
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(shared_->mutex);
  for (auto& child : shared_->children) {
    fs::create_directories(child.spec().dir);
    if (!child.readsCopy()) startLocked(child, now);
  }
}

void LocalCluster::startLocked(Child& child, Clock::time_point now) {
  if (!shared_->stopping) supervisor_.start(child, now);
}

// Starts the children that read the data set's copy once it is written, or, where it could not
// be written (a full disk), the data set itself; throws the DataError of a data set gone bad.
void LocalCluster::startReaders(Clock::time_point now) {
  if (!dataCopy_.valid() ||
      dataCopy_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return;
  }
  std::optional<std::string> failed;
  try {
    dataCopy_.get();
  } catch (const IoError& e) {
    failed = e.what();
  } catch (const fs::filesystem_error& e) {
    failed = e.what();
  }
  if (failed) events_.emit(observe::event::dataCopyFailed(*failed));
  std::lock_guard<std::mutex> lock(shared_->mutex);
  for (auto& child : shared_->children) {
    if (!child.readsCopy()) continue;
    if (failed) child.readOriginal();
    startLocked(child, now);
  }
}

Summary LocalCluster::awaitResult(const std::string& resultPath, const std::string& runId) {
  ProgressReporter progress(chiefHttpPort());
  for (;;) {
    scale(Clock::now());
    if (auto summary = resultOfRun(resultPath, runId)) {
      progress.finish();
      std::lock_guard<std::mutex> lock(shared_->mutex);
      for (const auto& child : shared_->children) {
        if (child.hasProcess()) summary->peakRssBytes[child.name()] = child.peakRssBytes();
      }
      return *summary;
    }
    startReaders(Clock::now());
    supervise(Clock::now());
    progress.update();
    std::this_thread::sleep_for(kLoopPeriod);
  }
}

// Only this thread adds or removes children, so it reads the list without the lock; it takes
// the lock for what the signal thread may do at the same time: reap and stop processes.
void LocalCluster::supervise(Clock::time_point now) {
  for (auto& child : shared_->children) {
    supervisor_.watch(child, now);
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (shared_->stopping) return;
    try {
      supervisor_.tend(child, now);
    } catch (const ExitError& e) {
      // A leaving ps that cannot be started again (beyond the run's ps, with no checkpoint to
      // serve) holds nothing of the run: it is out, and worker 0 re-cuts without it.
      if (leaving_.count(child.name()) == 0) throw;
      child.remove();
      log::logger("local")->warn("{} is out of the run: {}", child.name(), e.what());
    }
  }
}

// Acts on the scale signals that came since the last call.
void LocalCluster::scale(Clock::time_point now) {
  const auto requests = scaleQueue_.take();
  for (int n = requests.workersToAdd; n > 0; --n) addWorker(now);
  for (int n = requests.workersToRemove; n > 0; --n) removeWorker();
  for (int n = requests.psToAdd; n > 0; --n) addPs(now);
  for (int n = requests.psToRemove; n > 0; --n) removePs();
  stopLeavingPs(now);
}

// A new worker takes an index no worker had in this launch (and so a log dir of its own); it
// joins the run at its current parameters.
void LocalCluster::addWorker(Clock::time_point now) {
  auto& children = shared_->children;
  const int index = int(std::count_if(children.begin(), children.end(),
                                      [](const Child& child) { return child.isWorker(); }));
  const auto ports = net::freeLoopbackPorts(2);
  Child worker(planner_.plan("worker", index, ports[0], ports[1]));
  fs::create_directories(worker.spec().dir);
  std::lock_guard<std::mutex> lock(shared_->mutex);
  startLocked(worker, now);
  log::logger("local")->info("{} added (SIGUSR1), logs in {}", worker.name(), worker.spec().dir);
  children.push_back(std::move(worker));
}

// The newest worker is stopped with SIGTERM, as a StatefulSet scaled down stops its pod; worker
// 0, the chief, stays.
void LocalCluster::removeWorker() {
  auto& children = shared_->children;
  auto last = std::find_if(children.rbegin(), children.rend(), [](const Child& child) {
    return child.isWorker() && !child.isChief() && (child.hasProcess() || child.readsCopy());
  });
  if (last == children.rend()) {
    log::logger("local")->warn("SIGUSR2: no worker to remove; worker 0, the chief, stays");
    return;
  }
  std::lock_guard<std::mutex> lock(shared_->mutex);
  last->remove();
  log::logger("local")->info("{} removed (SIGUSR2)", last->name());
}

// A new ps takes the next index, as a StatefulSet's new pod its ordinal, and is listed first:
// it finds its place in the list, and worker 0 re-cuts the parameters over the ps listed. A ps of
// that index still leaving stays instead, in its old place: it may hold the only copy of its
// slice, and two processes of one name would share a log dir and a checkpoint.
void LocalCluster::addPs(Clock::time_point now) {
  const auto name = "ps-" + std::to_string(psHosts_.count());
  if (auto leaving = leaving_.find(name); leaving != leaving_.end()) {
    if (named(name)->hasProcess()) {
      psHosts_.restore(leaving->second.host);
      leaving_.erase(leaving);
      log::logger("local")->info("{} stays (SIGRTMIN): it was still leaving", name);
      return;
    }
    std::lock_guard<std::mutex> lock(shared_->mutex);  // out of the run and stopped: replaced
    shared_->children.erase(named(name));
    leaving_.erase(leaving);
    supervisor_.forget(name);
  }
  const auto ports = net::freeLoopbackPorts(2);
  psHosts_.add(ports[0]);
  Child ps(planner_.plan("ps", int(psHosts_.count()) - 1, ports[0], ports[1]));
  fs::create_directories(ps.spec().dir);
  std::lock_guard<std::mutex> lock(shared_->mutex);
  startLocked(ps, now);
  log::logger("local")->info("{} added (SIGRTMIN): worker 0 re-cuts the parameters over {} ps",
                             ps.name(), psHosts_.count());
  shared_->children.push_back(std::move(ps));
}

// The newest ps leaves the list; ps 0 stays. It is stopped once worker 0 has cut it out of the
// run (its slice and optimizer state moved to the others).
void LocalCluster::removePs() {
  if (psHosts_.count() <= 1) {
    log::logger("local")->warn("SIGRTMIN+1: no ps to remove; ps 0 stays");
    return;
  }
  auto host = psHosts_.removeLast();
  const auto name = "ps-" + std::to_string(psHosts_.count());
  log::logger("local")->info(
      "{} leaves (SIGRTMIN+1): worker 0 re-cuts the parameters over {} ps, then it stops", name,
      psHosts_.count());
  leaving_.insert_or_assign(name, Leaving{std::move(host), CutWatch(named(name)->spec().httpPort)});
}

// A leaving ps is stopped once out of the run; until then the Supervisor keeps it running.
void LocalCluster::stopLeavingPs(Clock::time_point now) {
  for (auto& [name, leaving] : leaving_) {
    auto child = named(name);
    if (!child->hasProcess() || !leaving.cut.outOfRun(now)) continue;
    std::lock_guard<std::mutex> lock(shared_->mutex);
    child->remove();
    log::logger("local")->info("{} stopped: it is out of the run", name);
  }
}

std::vector<Child>::iterator LocalCluster::named(const std::string& name) {
  return std::find_if(shared_->children.begin(), shared_->children.end(),
                      [&](const Child& child) { return child.name() == name; });
}

int LocalCluster::chiefHttpPort() const {
  const auto& children = shared_->children;
  return std::find_if(children.begin(), children.end(), [](const Child& child) {
           return child.isChief();
         })->spec().httpPort;
}

std::vector<std::string> LocalCluster::eventLogs() const {
  std::vector<std::string> logs;
  for (const auto& child : shared_->children) {
    // A worker that was to read the data set's copy has not started if the run ended first.
    const auto path = child.spec().dir + "/" + observe::kEventsFile;
    if (fs::exists(path)) logs.push_back(path);
  }
  return logs;
}

}  // namespace pstrain::app::local
