#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "pstrain/app/child_process.hpp"
#include "pstrain/app/commands.hpp"
#include "pstrain/app/signals.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/cpu_limit.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/net/free_ports.hpp"
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
// elsewhere (CI logs, files) a plain line every ten seconds.
class ProgressReporter {
 public:
  explicit ProgressReporter(int chiefHttpPort)
      : port_(chiefHttpPort), terminal_(::isatty(STDOUT_FILENO) == 1) {}

  void update() {
    auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + (terminal_ ? std::chrono::milliseconds(250) : std::chrono::seconds(10));
    std::string line;
    try {
      line = observe::describeProgress(observe::fetchStatus("127.0.0.1", port_, 0.5));
    } catch (const PeerError&) {
      return;  // worker 0 is not serving yet
    }
    if (terminal_) {
      std::printf("\r\033[K%s", line.c_str());
      shown_ = true;
    } else if (!first_) {
      std::printf("%s\n", line.c_str());
    }
    first_ = false;
    std::fflush(stdout);
  }

  void finish() {
    if (shown_) std::printf("\r\033[K");
    std::fflush(stdout);
  }

 private:
  int port_;
  bool terminal_;
  bool shown_ = false;
  bool first_ = true;  // off a terminal the first report, at the start, says nothing new
  std::chrono::steady_clock::time_point next_{};
};

struct Child {
  std::string name;  // "ps-0", "worker-1": also its log dir under logDir
  std::unique_ptr<ChildProcess> process;
};

// The children, shared with the signal thread so that Ctrl-C stops them too.
std::mutex childrenMutex;
std::vector<Child>* runningChildren = nullptr;

void stopAll(std::vector<Child>& children) {
  for (auto& child : children) ::kill(child.process->pid(), SIGTERM);
  for (auto& child : children) child.process->stop(std::chrono::milliseconds(5000));
}

}  // namespace

int runLocal(const std::string& self, const std::vector<std::string>& originalArgs) {
  const auto start = std::chrono::steady_clock::now();
  auto args = originalArgs;
  const auto summaryPath = takeSummaryFlag(args);
  const auto settings = config::load({args, config::processEnvironment()});
  data::findMnistFiles(settings.dataDir);  // a missing data set is reported once, here
  log::initConsole();
  auto logger = log::logger("local");

  // Each child gets its ps or worker port, then an HTTP port: ports[i] and ports[children + i].
  const int childCount = settings.ps + settings.workers;
  auto ports = net::freeLoopbackPorts(2 * childCount);
  std::string psHosts;
  for (int i = 0; i < settings.ps; ++i) {
    psHosts += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(ports[size_t(i)]);
  }

  // The workers share this machine: each gets its part of the CPUs for its BLAS threads
  // (inherited by the children; a value the user set is kept).
  auto blasThreads = std::to_string(std::max(1, cpuLimit() / settings.workers));
  ::setenv("OPENBLAS_NUM_THREADS", blasThreads.c_str(), 0);

  std::vector<Child> children;
  handleTerminationSignals([](int signal) {
    std::lock_guard<std::mutex> lock(childrenMutex);
    if (runningChildren) stopAll(*runningChildren);
    return 128 + signal;
  });
  {
    std::lock_guard<std::mutex> lock(childrenMutex);
    for (int i = 0; i < childCount; ++i) {
      bool isPs = i < settings.ps;
      int index = isPs ? i : i - settings.ps;
      std::string role = isPs ? "ps" : "worker";
      std::string name = role + "-" + std::to_string(index);
      std::string dir = settings.logDir + "/" + name;
      fs::create_directories(dir);
      for (const char* stale : {"deploy.log", "result.json", "model.bin"}) fs::remove(dir + "/" + stale);
      // The user's flags first, then this process's placement: for a repeated flag the last wins.
      std::vector<std::string> argv{self, "run"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<std::string> placement{"--role", role, "--index", std::to_string(index),
                                         "--ps-hosts", psHosts,
                                         isPs ? std::string("--ps-port") : "--worker-port",
                                         std::to_string(ports[size_t(i)]), "--http-port",
                                         std::to_string(ports[size_t(childCount + i)]),
                                         "--log-dir", dir,
                                         "--log-to-stdout", "false"};
      argv.insert(argv.end(), placement.begin(), placement.end());
      children.push_back(
          Child{name, std::make_unique<ChildProcess>(argv, "/dev/null", dir + "/stderr.log")});
    }
    runningChildren = &children;
  }
  logger->info("started {} ps and {} workers on loopback; logs in {}/<role>-<index>/deploy.log",
               settings.ps, settings.workers, settings.logDir);

  const std::string resultPath = settings.logDir + "/worker-0/result.json";
  ProgressReporter progress(ports[size_t(childCount + settings.ps)]);
  int failure = 0;
  std::string failureText;
  while (!fs::exists(resultPath)) {
    for (auto& child : children) {
      if (auto status = child.process->poll()) {
        failure = *status == 0 ? kExitFailure : *status;
        failureText = child.name + " exited with status " + std::to_string(*status) + ": " +
                      lastLine(settings.logDir + "/" + child.name + "/stderr.log");
        break;
      }
    }
    if (failure) break;
    progress.update();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  progress.finish();
  {
    std::lock_guard<std::mutex> lock(childrenMutex);
    runningChildren = nullptr;
    stopAll(children);
  }
  if (failure) throw ExitError(failureText, failure);

  auto summary = summaryFromJson(readFile(resultPath));
  summary.elapsedSeconds = secondsSince(start);
  logger->info("{} ps, {} workers: {}", settings.ps, settings.workers, describe(summary));
  if (!summaryPath.empty()) writeSummary(summary, summaryPath);

  std::vector<std::string> logs;
  for (const auto& child : children) logs.push_back(settings.logDir + "/" + child.name + "/deploy.log");
  const std::string curvePath = settings.logDir + "/curve.svg";
  writeFileAtomically(curvePath, plot::renderSvg(plot::readTrainingCurve(logs)));
  logger->info("training curve: {}", curvePath);
  return kExitOk;
}

}  // namespace pstrain::app
