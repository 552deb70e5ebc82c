#include <charconv>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <mutex>
#include <thread>

#include <sched.h>
#include <unistd.h>

#include "pstrain/app/child_process.hpp"
#include "pstrain/app/command_flags.hpp"
#include "pstrain/app/commands.hpp"
#include "pstrain/app/restart_backoff.hpp"
#include "pstrain/app/signals.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/cpu_limit.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/net/auth.hpp"
#include "pstrain/net/free_ports.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/status_client.hpp"
#include "pstrain/plot/training_curve.hpp"

namespace pstrain::app {
namespace {

namespace fs = std::filesystem;

std::string lastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Shows worker 0's progress: on a terminal one line rewritten in place a few times a second,
// elsewhere (CI logs, files) a log line, with its time, every ten seconds from the start.
class ProgressReporter {
 public:
  explicit ProgressReporter(int chiefHttpPort)
      : port_(chiefHttpPort),
        terminal_(::isatty(STDOUT_FILENO) == 1),
        next_(std::chrono::steady_clock::now() + (terminal_ ? kTerminalPeriod : kPlainPeriod)) {}

  void update() {
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

  void finish() {
    if (shown_) std::printf("\r\033[K");
    std::fflush(stdout);
  }

 private:
  static constexpr std::chrono::milliseconds kTerminalPeriod{250};
  static constexpr std::chrono::seconds kPlainPeriod{10};

  int port_;
  bool terminal_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point next_;
};

// The children, shared with the signal thread so that Ctrl-C stops them too. Once it has begun
// to stop them, none is started again: a child restarted then would outlive the stop long enough
// to restore its checkpoint and write to its log dir.
std::mutex childrenMutex;
bool stopping = false;

// One child process of the cluster: a ps or a worker, with the command line that starts it.
struct Child {
  std::string name;  // "ps-0", "worker-1": also its log dir under logDir
  std::vector<std::string> argv;
  std::string dir;
  bool readsCopy = false;  // starts once the plain copy of the data set is written
  std::unique_ptr<ChildProcess> process;  // none until started, and once removed
  int restarts = 0;
  RestartBackoff backoff;
  std::optional<std::chrono::steady_clock::time_point> restartAt;  // once exited, to start again
  std::uintmax_t eventsFrom = 0;  // where the current run's events begin in its events.jsonl
  // A ps removed from the list: stopped once worker 0 has cut it out of the run.
  std::optional<std::chrono::steady_clock::time_point> leavingSince;

  // Starts it, with childrenMutex held, unless the children are being stopped.
  void start() {
    if (stopping) return;
    eventsFrom = fs::exists(eventsPath()) ? fs::file_size(eventsPath()) : 0;
    process = std::make_unique<ChildProcess>(argv, "/dev/null", dir + "/stderr.log");
  }

  std::string eventsPath() const { return dir + "/" + observe::kEventsFile; }

  // Whether the current run has reported a state (training or completed): it is past reading
  // its settings, data set and checkpoint, and past reaching the ps.
  bool reportsWork() const {
    return reports([](const Poco::JSON::Object::Ptr& event) {
      return event->optValue<std::string>("event", "") == "state" &&
             event->optValue<std::string>("state", "") !=
                 observe::stateName(observe::State::kWaiting);
    });
  }

  // Of a ps: whether a re-cut has left it out of the run (it serves no parameters).
  bool cutOut() const {
    return reports([](const Poco::JSON::Object::Ptr& event) {
      return event->optValue<std::string>("event", "") == "cut" &&
             event->optValue<std::uint64_t>("count", 1) == 0;
    });
  }

  // Whether the current run has recorded an event that `matches`.
  bool reports(const std::function<bool(const Poco::JSON::Object::Ptr&)>& matches) const {
    if (!fs::exists(eventsPath())) return false;
    auto events = observe::readEvents(eventsPath(), eventsFrom);
    return std::any_of(events.begin(), events.end(), matches);
  }
};

std::vector<Child>* runningChildren = nullptr;

void stopAll(std::vector<Child>& children) {
  for (auto& child : children) {
    if (child.process) ::kill(child.process->pid(), SIGTERM);
  }
  for (auto& child : children) {
    if (child.process) child.process->stop(std::chrono::milliseconds(5000));
  }
}

// Starts the children (those that read the data set's copy once it is written) and lets the
// signal thread see them; stops them when it goes out of scope.
class RunningChildren {
 public:
  RunningChildren(std::vector<Child>& children, std::future<void> dataCopy)
      : children_(children), dataCopy_(std::move(dataCopy)) {
    std::lock_guard<std::mutex> lock(childrenMutex);
    for (auto& child : children_) {
      fs::create_directories(child.dir);
      if (!child.readsCopy) child.start();
    }
    runningChildren = &children_;
  }

  // Starts the children that read the data set's copy if it is ready; throws its DataError.
  void startReaders() {
    if (!dataCopy_.valid() ||
        dataCopy_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      return;
    }
    dataCopy_.get();
    std::lock_guard<std::mutex> lock(childrenMutex);
    for (auto& child : children_) {
      if (child.readsCopy) child.start();
    }
  }

  ~RunningChildren() {
    std::lock_guard<std::mutex> lock(childrenMutex);
    runningChildren = nullptr;
    stopAll(children_);
  }

  RunningChildren(const RunningChildren&) = delete;
  RunningChildren& operator=(const RunningChildren&) = delete;

 private:
  std::vector<Child>& children_;
  std::future<void> dataCopy_;
};

// A key for the children to prove to each other, made once per log dir (kept for a resumed run).
std::string makeAuthKeyFile(const std::string& logDir) {
  const std::string path = logDir + "/auth.key";
  if (fs::exists(path)) return path;
  fs::create_directories(logDir);
  std::string key;
  for (auto byte : net::randomNonce()) key += fmt::format("{:02x}", byte);
  for (auto byte : net::randomNonce()) key += fmt::format("{:02x}", byte);
  writeFileAtomically(path, key + "\n");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  return path;
}

// The HTTP port the user asked for with --http-port (the last one, as for every flag): worker
// 0's, where its page is.
std::optional<int> chosenHttpPort(const std::vector<std::string>& args,
                                  const config::Config& settings) {
  const bool chosen = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "--http-port" || arg.rfind("--http-port=", 0) == 0;
  });
  return chosen ? std::optional<int>(settings.httpPort) : std::nullopt;
}

// The thread that copies the data set for the workers that wait their turn runs only on CPU
// time the training leaves idle (SCHED_IDLE): at a nice value it still delays the first workers'
// replies to each other. 8 workers on 2 cores, time to 0.85 against 2 workers' (medians of 7):
// 0.87 s at SCHED_IDLE, 0.98 s at nice 10, 1.00 s for 2 workers at batch 100; 1.20 s, 1.50 s
// and 0.91 s at batch 20. The waiting workers then join after about 2 s instead of 1.4-2.2 s.
void runOnIdleCpuOnly() {
  sched_param none{};
  ::sched_setscheduler(::gettid(), SCHED_IDLE, &none);  // if refused, the copy only runs sooner
}

// One ps or worker of the cluster on loopback, with its own port, HTTP port and log dir.
Child planChild(const std::string& self, const std::vector<std::string>& args,
                const config::Config& settings, const std::string& psHostsFile,
                const std::string& role, int index, int port, int httpPort) {
  std::string name = role + "-" + std::to_string(index);
  std::string dir = settings.logDir + "/" + name;
  // The user's flags first, then this process's placement: for a repeated flag the last wins.
  std::vector<std::string> argv{self, "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> placement{"--role", role, "--index", std::to_string(index),
                                     "--ps-hosts-file", psHostsFile,
                                     role == "ps" ? "--ps-port" : "--worker-port",
                                     std::to_string(port), "--http-port",
                                     std::to_string(httpPort),
                                     "--log-dir", dir, "--log-to-stdout", "false"};
  argv.insert(argv.end(), placement.begin(), placement.end());
  argv.insert(argv.end(), {"--concurrent-workers", std::to_string(settings.concurrentWorkers)});
  if (settings.authKeyFile.empty()) {
    argv.insert(argv.end(), {"--auth-key-file", makeAuthKeyFile(settings.logDir)});
  }
  Child child;
  child.name = name;
  child.argv = argv;
  child.dir = dir;
  return child;
}

// The ps of the cluster, as its children read them: a file that changes when ps are added or
// removed (worker 0 re-cuts the parameters over them), as a ConfigMap does.
class PsHosts {
 public:
  explicit PsHosts(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  size_t count() const { return hosts_.size(); }
  void add(int port) {
    hosts_.push_back("127.0.0.1:" + std::to_string(port));
    write();
  }
  void removeLast() {
    hosts_.pop_back();
    write();
  }

 private:
  void write() const {
    std::string list;
    for (const auto& host : hosts_) list += (list.empty() ? "" : ",") + host;
    writeFileAtomically(path_, list + "\n");
  }
  std::string path_;
  std::vector<std::string> hosts_;
};

// Every ps and worker as a child process on loopback, each with its own ports and log dir; the
// workers reach ps i at `fronts[i]`, if given. With `dataCopy`, the workers beyond those that
// compute at once read the data set there.
std::vector<Child> planChildren(const std::string& self, const std::vector<std::string>& args,
                                const config::Config& settings, PsHosts& psHosts,
                                const std::vector<int>& fronts,
                                const std::optional<std::string>& dataCopy) {
  // Each child gets its ps or worker port, then an HTTP port: ports[i] and ports[children + i];
  // worker 0 the HTTP port the user chose, if any, which no other child may get.
  const int childCount = settings.ps + settings.workers;
  const auto chiefPort = chosenHttpPort(args, settings);
  auto ports = net::freeLoopbackPorts(2 * childCount + 1);
  if (auto taken = std::find(ports.begin(), ports.end(), chiefPort.value_or(0));
      taken != ports.end()) {
    ports.erase(taken);
  }
  fs::create_directories(settings.logDir);
  for (int i = 0; i < settings.ps; ++i) {
    psHosts.add(fronts.empty() ? ports[size_t(i)] : fronts[size_t(i)]);
  }
  std::vector<Child> children;
  const int capacity = settings.concurrentWorkers;
  for (int i = 0; i < childCount; ++i) {
    bool isPs = i < settings.ps;
    int index = isPs ? i : i - settings.ps;
    const int httpPort =
        !isPs && index == 0 && chiefPort ? *chiefPort : ports[size_t(childCount + i)];
    auto child = planChild(self, args, settings, psHosts.path(), isPs ? "ps" : "worker", index,
                           ports[size_t(i)], httpPort);
    child.readsCopy =
        !isPs && dataCopy && !config::synchronous(settings) && capacity > 0 && index >= capacity;
    if (child.readsCopy) child.argv.insert(child.argv.end(), {"--data-dir", *dataCopy});
    children.push_back(std::move(child));
  }
  return children;
}

// The value of the child's last `flag`, the one it uses (its placement's).
std::string flagOf(const Child& child, const std::string& flag) {
  return *(std::find(child.argv.rbegin(), child.argv.rend(), flag) - 1);
}

int httpPortOf(const Child& child) { return std::stoi(flagOf(child, "--http-port")); }

int chiefHttpPort(const std::vector<Child>& children) {
  return httpPortOf(*std::find_if(children.begin(), children.end(),
                                  [](const Child& c) { return c.name == "worker-0"; }));
}

// Worker 0's result of this run, if it has written one.
std::optional<Summary> resultOfRun(const std::string& path, const std::string& runId) {
  if (!fs::exists(path)) return std::nullopt;
  auto summary = summaryFromJson(readFile(path));
  if (summary.runId != runId) return std::nullopt;
  return summary;
}

// `kill -USR1` adds a worker and `kill -USR2` removes the newest: the launcher's `kubectl scale
// statefulset <release>-worker`. `kill -RTMIN` adds a ps and `kill -RTMIN+1` removes the newest:
// its `helm upgrade --set ps.number=N`. The handlers only count; the launcher's loop acts on the
// counts.
std::atomic<int> workersToAdd{0};
std::atomic<int> workersToRemove{0};
std::atomic<int> psToAdd{0};
std::atomic<int> psToRemove{0};

void countScaleSignal(int signal) {
  if (signal == SIGUSR1) workersToAdd.fetch_add(1);
  if (signal == SIGUSR2) workersToRemove.fetch_add(1);
  if (signal == SIGRTMIN) psToAdd.fetch_add(1);
  if (signal == SIGRTMIN + 1) psToRemove.fetch_add(1);
}

// How long a ps left out of the list may wait for worker 0's re-cut before it is stopped all the
// same (its parameters are in worker 0's copy).
constexpr std::chrono::seconds kLeavingPsWait{60};

// Adds and removes the ps the scale signals asked for since the last call, in the list the
// children read (PsHosts): worker 0 re-cuts the parameters over the ps listed. A new ps takes the
// next index, as a StatefulSet's new pod its ordinal; a removed ps, the newest, is stopped once
// worker 0 has cut it out of the run (its slice and optimizer state moved to the others); ps 0
// stays.
void scalePs(std::vector<Child>& children, PsHosts& psHosts,
             const std::function<Child(int index, int port, int httpPort)>& planPs) {
  auto logger = log::logger("local");
  auto named = [&](const std::string& name) {
    return std::find_if(children.begin(), children.end(),
                        [&](const Child& child) { return child.name == name; });
  };
  for (int n = psToAdd.exchange(0); n > 0; --n) {
    const int index = int(psHosts.count());
    const auto ports = net::freeLoopbackPorts(2);
    psHosts.add(ports[0]);  // first: the new ps finds its place in the list
    auto ps = planPs(index, ports[0], ports[1]);
    fs::create_directories(ps.dir);
    std::lock_guard<std::mutex> lock(childrenMutex);
    if (auto old = named(ps.name); old != children.end()) {  // still leaving from before
      if (old->process) old->process->stop(std::chrono::milliseconds(5000));
      children.erase(old);
    }
    ps.start();
    logger->info("{} added (SIGRTMIN): worker 0 re-cuts the parameters over {} ps", ps.name,
                 psHosts.count());
    children.push_back(std::move(ps));
  }
  for (int n = psToRemove.exchange(0); n > 0; --n) {
    if (psHosts.count() <= 1) {
      logger->warn("SIGRTMIN+1: no ps to remove; ps 0 stays");
      continue;
    }
    psHosts.removeLast();
    const auto name = "ps-" + std::to_string(psHosts.count());
    logger->info("{} leaves (SIGRTMIN+1): worker 0 re-cuts the parameters over {} ps, then it "
                 "stops", name, psHosts.count());
    if (auto leaving = named(name); leaving != children.end()) {
      leaving->leavingSince = std::chrono::steady_clock::now();
    }
  }
  for (auto& child : children) {
    if (!child.leavingSince || !child.process) continue;
    if (!child.cutOut() && std::chrono::steady_clock::now() < *child.leavingSince + kLeavingPsWait) {
      continue;
    }
    std::lock_guard<std::mutex> lock(childrenMutex);
    child.process->stop(std::chrono::milliseconds(5000));
    child.process.reset();
    logger->info("{} stopped: it is out of the run", child.name);
  }
}

bool isWorker(const Child& child) { return child.name.rfind("worker-", 0) == 0; }

// Adds and removes the workers the scale signals asked for since the last call. A new worker
// takes an index no worker had in this launch (and so a log dir of its own); it joins the run at
// its current parameters. A removed worker is stopped with SIGTERM, as a StatefulSet scaled down
// stops its pod; worker 0, the chief, stays.
void scaleWorkers(std::vector<Child>& children,
                  const std::function<Child(int index)>& planWorker) {
  auto logger = log::logger("local");
  for (int n = workersToAdd.exchange(0); n > 0; --n) {
    auto worker = planWorker(int(std::count_if(children.begin(), children.end(), isWorker)));
    fs::create_directories(worker.dir);
    std::lock_guard<std::mutex> lock(childrenMutex);
    worker.start();
    logger->info("{} added (SIGUSR1), logs in {}", worker.name, worker.dir);
    children.push_back(std::move(worker));
  }
  for (int n = workersToRemove.exchange(0); n > 0; --n) {
    auto last = std::find_if(children.rbegin(), children.rend(), [](const Child& child) {
      return isWorker(child) && child.name != "worker-0" && (child.process || child.readsCopy);
    });
    if (last == children.rend()) {
      logger->warn("SIGUSR2: no worker to remove; worker 0, the chief, stays");
      continue;
    }
    std::lock_guard<std::mutex> lock(childrenMutex);
    last->readsCopy = false;
    if (last->process) last->process->stop(std::chrono::milliseconds(5000));
    last->process.reset();
    logger->info("{} removed (SIGUSR2)", last->name);
  }
}

// Waits for worker 0's result, restarting children that die and scaling the workers on signal;
// throws ExitError when a child cannot be kept running.
Summary awaitResult(std::vector<Child>& children, RunningChildren& running,
                    const std::function<Child(int index)>& planWorker, PsHosts& psHosts,
                    const std::function<Child(int index, int port, int httpPort)>& planPs,
                    const std::string& resultPath, const std::string& runId,
                    observe::Events& events) {
  ProgressReporter progress(chiefHttpPort(children));
  for (;;) {
    scaleWorkers(children, planWorker);
    scalePs(children, psHosts, planPs);
    if (auto summary = resultOfRun(resultPath, runId)) {
      progress.finish();
      for (const auto& child : children) {
        if (child.process) summary->peakRssBytes[child.name] = child.process->peakRssBytes();
      }
      return *summary;
    }
    running.startReaders();
    {
      // Held while polling too: the signal thread reaps the children it stops.
      std::lock_guard<std::mutex> lock(childrenMutex);
      for (auto& child : children) {
        if (stopping || !child.process) continue;
        if (child.restartAt) {
          if (std::chrono::steady_clock::now() < *child.restartAt) continue;
          child.restartAt.reset();
          child.start();
          continue;
        }
        // Polled first: a child that has exited has written all its events.
        auto status = child.process->poll();
        if (!child.backoff.atWork() && child.reportsWork()) child.backoff.reachedWork();
        if (!status) continue;
        if (child.leavingSince) {  // out of the list: not started again
          child.process.reset();
          continue;
        }
        auto delay = child.backoff.exited(*status);
        if (!delay) {
          progress.finish();
          throw ExitError(child.name + " exited with status " + std::to_string(*status) + ": " +
                              lastLine(child.dir + "/stderr.log"),
                          *status == 0 ? kExitFailure : *status);
        }
        // As a StatefulSet would: the same role, index, ports and log dir, after the delay.
        child.restartAt = std::chrono::steady_clock::now() + *delay;
        events.emit(observe::event::restarted(child.name, *status, ++child.restarts,
                                              std::chrono::duration<double>(*delay).count()));
      }
    }
    progress.update();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void report(const Summary& summary, const config::Config& settings,
            const std::vector<Child>& children, const std::string& summaryPath) {
  auto logger = log::logger("local");
  logger->info("{} ps, {} workers: {}", settings.ps, settings.workers, describe(summary));
  if (!summaryPath.empty()) writeSummary(summary, summaryPath);
  std::vector<std::string> logs;
  for (const auto& child : children) {
    // A worker that was to read the data set's copy has not started if the run ended first.
    if (fs::exists(child.dir + "/" + observe::kEventsFile)) {
      logs.push_back(child.dir + "/" + observe::kEventsFile);
    }
  }
  const std::string curvePath = settings.logDir + "/curve.svg";
  writeFileAtomically(curvePath, plot::renderSvg(plot::readTrainingCurve(logs)));
  logger->info("training curve: {}", curvePath);
}

// `--ps-fronts PORT,...`: ps i is reached at 127.0.0.1:PORT_i, where something in front of it
// (a proxy that delays, cuts or drops what passes) forwards to the port it listens on (its
// `listening` event). One port for each ps at the start; ps added later are reached directly.
std::vector<int> psFronts(const std::string& flag, int psCount) {
  std::vector<int> ports;
  std::istringstream list(flag);
  for (std::string port; std::getline(list, port, ',');) {
    int value = 0;
    const auto end = port.data() + port.size();
    if (auto [at, error] = std::from_chars(port.data(), end, value);
        error != std::errc() || at != end || value < 1 || value > 65535) {
      throw ConfigError("--ps-fronts: \"" + port + "\" is not a port");
    }
    ports.push_back(value);
  }
  if (!flag.empty() && int(ports.size()) != psCount) {
    throw ConfigError("--ps-fronts names " + std::to_string(ports.size()) + " ports for " +
                      std::to_string(psCount) + " ps");
  }
  return ports;
}

}  // namespace

int runLocal(const std::string& self, const std::vector<std::string>& originalArgs) {
  const auto start = std::chrono::steady_clock::now();
  auto args = originalArgs;
  const auto summaryPath = takeFlag(args, "--summary-json");
  const bool keepServing = takeSwitch(args, "--keep-serving");
  const auto fronts = takeFlag(args, "--ps-fronts");
  auto settings = config::load({args, config::processEnvironment()});
  // Decided once, for every child alike: the workers share this machine's CPUs.
  settings.concurrentWorkers = config::concurrentWorkers(settings, cpuLimit());
  // A missing data set is reported once, here.
  const bool compressed = data::isCompressed(data::findMnistFiles(settings.dataDir));
  log::initConsole();
  auto logger = log::logger("local");
  const auto runId = std::to_string(config::runFingerprint(settings));
  const std::string resultPath = settings.logDir + "/worker-0/result.json";
  // The workers that compute first inflate the data set each, as they would on nodes of their
  // own; the others, which wait their turn anyway, read a plain copy written here meanwhile, at
  // a lower priority than the training (8 workers on 2 cores: 3 inflations instead of 8, and
  // the first step after 2).
  const std::string dataCopy = settings.logDir + "/data";
  PsHosts psHosts(settings.logDir + "/ps-hosts");
  auto children = planChildren(self, args, settings, psHosts, psFronts(fronts, settings.ps),
                               compressed ? std::optional<std::string>(dataCopy) : std::nullopt);
  const bool copyNeeded = std::any_of(children.begin(), children.end(),
                                      [](const Child& child) { return child.readsCopy; });
  observe::Events events("local", 0, settings.logDir + "/" + observe::kEventsFile);

  // The log dir is the cluster's state, as a StatefulSet's volumes are: the same command again
  // resumes the run from its checkpoints, or reports it if it has completed.
  if (auto done = resultOfRun(resultPath, runId)) {
    logger->info("run {} has completed already in {}; change a setting or the log dir to train "
                 "another", runId, settings.logDir);
    report(*done, settings, children, summaryPath);
    return kExitOk;
  }

  // The workers share this machine: each gets its part of the CPUs for its BLAS threads
  // (inherited by the children; a value the user set is kept).
  auto blasThreads = std::to_string(std::max(1, cpuLimit() / settings.workers));
  ::setenv("OPENBLAS_NUM_THREADS", blasThreads.c_str(), 0);
  setSignalHandler({SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMIN + 1}, countScaleSignal);
  const TerminationSignals signals([](int signal) {
    std::lock_guard<std::mutex> lock(childrenMutex);
    stopping = true;
    if (runningChildren) stopAll(*runningChildren);
    return 128 + signal;
  });
  Summary summary;
  {
    std::future<void> copying;
    if (copyNeeded) {
      copying = std::async(std::launch::async, [&] {
        runOnIdleCpuOnly();
        data::writePlainCopy(settings.dataDir, dataCopy);
      });
    }
    RunningChildren running(children, std::move(copying));
    logger->info(
        "started {} ps and {} workers on loopback; logs in {}/<role>-<index>/deploy.log; BLAS "
        "kernels: {}",
        settings.ps, settings.workers, settings.logDir, describeBlasCore());
    const std::string page = "http://127.0.0.1:" +
                             std::to_string(chiefHttpPort(children)) + "/";
    events.emit(observe::event::page(page));
    // New workers and ps read the list of ps; their ports are free now.
    auto planWorker = [&](int index) {
      auto ports = net::freeLoopbackPorts(2);
      return planChild(self, args, settings, psHosts.path(), "worker", index, ports[0], ports[1]);
    };
    auto planPs = [&](int index, int port, int httpPort) {
      return planChild(self, args, settings, psHosts.path(), "ps", index, port, httpPort);
    };
    summary = awaitResult(children, running, planWorker, psHosts, planPs, resultPath, runId,
                          events);
    if (keepServing) {
      summary.elapsedSeconds = secondsSince(start);
      events.emit(observe::event::runDone(summary.globalStep, summary.elapsedSeconds,
                                          summary.testAccuracy));
      report(summary, settings, children, summaryPath);
      logger->info("the processes stay up until stopped (Ctrl-C): predictions and the page at {}",
                   page);
      idleUntilTerminated();
    }
  }
  summary.elapsedSeconds = secondsSince(start);
  events.emit(
      observe::event::runDone(summary.globalStep, summary.elapsedSeconds, summary.testAccuracy));
  report(summary, settings, children, summaryPath);
  return kExitOk;
}

}  // namespace pstrain::app
