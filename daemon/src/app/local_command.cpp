#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <future>
#include <sstream>

#include "pstrain/app/command_flags.hpp"
#include "pstrain/app/commands.hpp"
#include "pstrain/app/local/local_cluster.hpp"
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
#include "pstrain/observe/events.hpp"
#include "pstrain/plot/training_curve.hpp"

namespace pstrain::app {
namespace {

using local::LocalCluster;

// The thread that copies the data set for the workers that wait their turn runs only on CPU
// time the training leaves idle (SCHED_IDLE): at a nice value it still delays the first workers'
// replies to each other. 8 workers on 2 cores, time to 0.85 against 2 workers' (medians of 7):
// 0.87 s at SCHED_IDLE, 0.98 s at nice 10, 1.00 s for 2 workers at batch 100; 1.20 s, 1.50 s
// and 0.91 s at batch 20. The waiting workers then join after about 2 s instead of 1.4-2.2 s.
void runOnIdleCpuOnly() {
  sched_param none{};
  ::sched_setscheduler(::gettid(), SCHED_IDLE, &none);  // if refused, the copy only runs sooner
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

// Where worker 0 writes the run's result, and where the data set's plain copy goes.
std::string resultPath(const config::Config& settings) {
  return settings.logDir + "/worker-0/result.json";
}
std::string dataCopyDir(const config::Config& settings) { return settings.logDir + "/data"; }

void report(const Summary& summary, const config::Config& settings,
            const std::vector<std::string>& eventLogs, const std::string& summaryPath) {
  auto logger = log::logger("local");
  logger->info("{} ps, {} workers: {}", settings.ps, settings.workers, describe(summary));
  if (!summaryPath.empty()) writeSummary(summary, summaryPath);
  const std::string curvePath = settings.logDir + "/curve.svg";
  writeFileWhenRoom(curvePath, plot::renderSvg(plot::readTrainingCurve(eventLogs)));
  logger->info("training curve: {}", curvePath);
}

// What `pstrain local` was asked for: its own flags, and the settings every child shares.
struct Request {
  std::string summaryPath;  // --summary-json
  bool keepServing = false;
  std::string fronts;  // --ps-fronts
  std::vector<std::string> args;  // the rest: the children's flags
  config::Config settings;
};

Request readRequest(const std::vector<std::string>& originalArgs) {
  Request request;
  request.args = originalArgs;
  request.summaryPath = takeFlag(request.args, "--summary-json");
  request.keepServing = takeSwitch(request.args, "--keep-serving");
  request.fronts = takeFlag(request.args, "--ps-fronts");
  request.settings = config::load({request.args, config::processEnvironment()});
  // Decided once, for every child alike: the workers share this machine's CPUs.
  request.settings.concurrentWorkers = config::concurrentWorkers(request.settings, cpuLimit());
  return request;
}

// Trains in `cluster` until worker 0's result; with --keep-serving, reports it and then serves
// until stopped, never returning.
Summary train(LocalCluster& cluster, const Request& request, const std::string& runId,
              observe::Events& events, std::chrono::steady_clock::time_point start) {
  const auto& settings = request.settings;
  std::future<void> copying;
  if (cluster.readsDataCopy()) {
    copying = std::async(std::launch::async, [&settings] {
      runOnIdleCpuOnly();
      data::writePlainCopy(settings.dataDir, dataCopyDir(settings));
    });
  }
  cluster.start(std::move(copying));
  log::logger("local")->info(
      "started {} ps and {} workers on loopback; logs in {}/<role>-<index>/deploy.log; BLAS "
      "kernels: {}",
      settings.ps, settings.workers, settings.logDir, describeBlasCore());
  const std::string page = "http://127.0.0.1:" + std::to_string(cluster.chiefHttpPort()) + "/";
  events.emit(observe::event::page(page));
  auto summary = cluster.awaitResult(resultPath(settings), runId);
  if (request.keepServing) {
    summary.elapsedSeconds = secondsSince(start);
    events.emit(observe::event::runDone(summary.globalStep, summary.elapsedSeconds,
                                        summary.testAccuracy));
    report(summary, settings, cluster.eventLogs(), request.summaryPath);
    log::logger("local")->info(
        "the processes stay up until stopped (Ctrl-C): predictions and the page at {}", page);
    idleUntilTerminated();
  }
  return summary;
}

}  // namespace

int runLocal(const std::string& self, const std::vector<std::string>& originalArgs) {
  const auto start = std::chrono::steady_clock::now();
  const auto request = readRequest(originalArgs);
  const auto& settings = request.settings;
  // A missing data set is reported once, here.
  const bool compressed = data::isCompressed(data::findMnistFiles(settings.dataDir));
  log::initConsole();
  const auto runId = std::to_string(config::runFingerprint(settings));
  observe::Events events("local", 0, settings.logDir + "/" + observe::kEventsFile);
  // The workers that compute first inflate the data set each, as they would on nodes of their
  // own; the others, which wait their turn anyway, read a plain copy written meanwhile, at a
  // lower priority than the training (8 workers on 2 cores: 3 inflations instead of 8, and the
  // first step after 2).
  LocalCluster cluster({self, request.args, settings, psFronts(request.fronts, settings.ps),
                        compressed ? std::optional(dataCopyDir(settings)) : std::nullopt},
                       events);
  // The log dir is the cluster's state, as a StatefulSet's volumes are: the same command again
  // resumes the run from its checkpoints, or reports it if it has completed.
  if (auto done = resultOfRun(resultPath(settings), runId)) {
    log::logger("local")->info("run {} has completed already in {}; change a setting or the log "
                               "dir to train another", runId, settings.logDir);
    report(*done, settings, cluster.eventLogs(), request.summaryPath);
    return kExitOk;
  }
  // The workers share this machine: each gets its part of the CPUs for its BLAS threads
  // (inherited by the children; a value the user set is kept).
  auto blasThreads = std::to_string(std::max(1, cpuLimit() / settings.workers));
  ::setenv("OPENBLAS_NUM_THREADS", blasThreads.c_str(), 0);
  const TerminationSignals signals([stop = cluster.stopper()](int signal) {
    stop();
    return 128 + signal;
  });
  auto summary = train(cluster, request, runId, events, start);
  cluster.stop();
  summary.elapsedSeconds = secondsSince(start);
  events.emit(
      observe::event::runDone(summary.globalStep, summary.elapsedSeconds, summary.testAccuracy));
  report(summary, settings, cluster.eventLogs(), request.summaryPath);
  return kExitOk;
}

}  // namespace pstrain::app
