#include <Poco/Environment.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <csignal>
#include <limits>

#include "pstrain/app/chief.hpp"
#include "pstrain/app/commands.hpp"
#include "pstrain/app/completion_record.hpp"
#include "pstrain/app/http_endpoint.hpp"
#include "pstrain/app/pod_api.hpp"
#include "pstrain/app/ps_reporter.hpp"
#include "pstrain/app/role_options.hpp"
#include "pstrain/app/signals.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/app/worker_reporter.hpp"
#include "pstrain/cluster/kubernetes_api.hpp"
#include "pstrain/cluster/placement.hpp"
#include "pstrain/cluster/run_identity.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/cpu_limit.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/data/data_set.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/model/onnx_export.hpp"
#include "pstrain/net/dialer.hpp"
#include "pstrain/net/listener.hpp"
#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/observe/prometheus_exposition.hpp"
#include "pstrain/observe/status_json.hpp"
#include "pstrain/observe/worker_roster.hpp"
#include "pstrain/ps/server.hpp"
#include "pstrain/serve/predictor.hpp"
#include "pstrain/worker/trainer.hpp"

namespace pstrain::app {
namespace {

// What the run trains, as the page's summary shows it.
observe::Progress::Run runOf(const config::Config& settings) {
  observe::Progress::Run run;
  run.dataDir = settings.dataDir;
  run.layers = {model::kMnistInputs};
  run.layers.insert(run.layers.end(), settings.hiddenUnits.begin(), settings.hiddenUnits.end());
  run.layers.push_back(model::kMnistClasses);
  run.optimizer = settings.optimizer == ps::OptimizerKind::kAdam ? "adam" : "sgd";
  run.learningRate = settings.learningRate;
  run.batchSize = settings.batchSize;
  run.sync = config::synchronous(settings);
  run.pushEncoding = net::encodingName(settings.pushEncoding);
  run.pullEncoding = net::encodingName(settings.pullEncoding);
  run.startedAt = unixTime();
  return run;
}

// What one process reports, each to its reader: the record of events, the progress, the meters
// and a ps's roster of workers; /metrics and /status render them.
struct Reports {
  Reports(const config::Config& settings, const cluster::Placement& placement,
          observe::Events& record)
      : events(record),
        progress(placement.role, placement.index, std::uint64_t(settings.trainSteps), record),
        meters(placement.role, placement.index),
        exposition(progress, meters) {}

  // What the HTTP endpoint shows of them.
  HttpEndpoint::Pages pages() {
    HttpEndpoint::Pages pages;
    pages.metrics = [this] { return exposition.text(); };
    pages.state = [this] { return progress.state(); };
    pages.events = &events;
    if (progress.role() == Role::kPs) {
      pages.status = [this] { return observe::statusJson(progress, &workers, &meters); };
    } else {
      pages.status = [this] { return observe::statusJson(progress, nullptr, &meters); };
      pages.psHttp = [this] { return progress.psHttp(); };
    }
    return pages;
  }

  observe::Events& events;
  observe::Progress progress;
  observe::Meters meters;
  observe::WorkerRoster workers;  // a ps's
  observe::PrometheusExposition exposition;
};

[[noreturn]] void runPs(const config::Config& settings, const cluster::Placement& placement,
                        Reports& reports, TerminationSignals& signals, int httpPort) {
  auto options = serverOptions(settings, placement.index);
  options.httpPort = httpPort;
  PsReporter reporter(placement.index, int(settings.logEverySteps), reports.progress,
                      reports.meters, reports.workers, reports.events);
  const auto history = historyRecorder(settings, Role::kPs, placement.index,
                                       settings.logDir + "/" + observe::kHistoryFile);
  if (history) reporter.recordHistory(*history);
  ps::Server server(std::move(options), reporter);
  net::Listener listener(
      listenerOptions(server, placement.listenPort, &reports.meters.traffic, &reporter),
      [&server](net::Channel& channel) { server.serve(channel); });
  reports.events.emit(observe::event::listening(placement.index, listener.port()));
  server.announce();
  log::flush();  // where to reach it, at once
  signals.addHook([&server] { server.stop(); });
  idleUntilTerminated();
}

// The ps as the settings say now: their sources read again (the configuration file, which the
// kubelet keeps as its ConfigMap is now, or psHostsFile, which `pstrain local` rewrites). Settings
// that cannot be read while they change keep the last list that could.
std::function<std::vector<net::Endpoint>()> currentPs(const std::vector<std::string>& args,
                                                      const std::map<std::string, std::string>& env,
                                                      std::vector<net::Endpoint> known) {
  return [args, env, known = std::move(known)]() mutable {
    try {
      known = cluster::place(config::load({args, env}), Poco::Environment::nodeName(),
                             envOr(env, "POD_NAMESPACE"))
                  .ps;
    } catch (const ConfigError& e) {
      log::logger("worker")->warn("the ps stay those known: {}", e.what());
    }
    return known;
  };
}

[[noreturn]] void runWorker(const config::Config& settings, const cluster::Placement& placement,
                            Reports& reports, serve::ModelSlot* model,
                            std::function<std::vector<net::Endpoint>()> psNow) {
  auto logger = log::logger("worker");
  const auto start = std::chrono::steady_clock::now();
  std::optional<Chief> chief;
  if (model) chief.emplace(settings, reports.events, reports.progress, *model);
  const auto runId = config::runFingerprint(settings);
  if (auto step = completedGlobalStep(settings.checkpointDir, runId)) {
    reports.progress.recordStep(*step, std::numeric_limits<float>::quiet_NaN());
    reports.events.emit(
        observe::event::alreadyCompleted(placement.index, std::to_string(runId), *step));
    reports.progress.setState(observe::State::kCompleted);
    if (chief) chief->serveWrittenModel();
    if (chief) chief->scaleDown();
    idleUntilTerminated();
  }
  auto files = data::findMnistFiles(settings.dataDir);
  // The whole set: which part of it this worker samples from follows the workers connected.
  auto train = data::loadTrainingSet(files);
  const data::Examples* test = chief ? &chief->loadTestSet(files) : nullptr;
  logger->info("Worker {}: loaded {} training examples{} from {}", placement.index, train.count,
               test ? " and " + std::to_string(test->count) + " test examples" : "",
               settings.dataDir);

  WorkerReporter reporter(placement.index, int(settings.logEverySteps), reports.progress,
                          reports.meters, reports.events);
  auto options = clientOptions(settings, placement.index, placement.ps);
  options.currentPs = std::move(psNow);
  ps::Client client(std::move(options), net::tcpDialer(&reports.meters.traffic), reporter,
                    chief ? chief->recutCoordinator(reporter) : nullptr);
  const auto history =
      historyRecorder(settings, Role::kWorker, placement.index,
                      settings.logDir + "/" + observe::kHistoryFile, client.incarnation());
  if (history) reporter.recordHistory(*history);
  worker::Trainer trainer(trainerOptions(settings, placement.index), client, reporter,
                          reports.meters.traffic);
  auto result = trainer.run(train, test);
  if (chief) chief->finish(trainer, result, runId, secondsSince(start));
  recordCompletion(settings.checkpointDir, runId, result.globalStep);
  // Completed once its files are written: whoever waits for the state can read result.json.
  reports.progress.setState(observe::State::kCompleted);
  logger->info("Worker {}: completed; idle until stopped", placement.index);
  log::flush();
  if (chief) chief->scaleDown();
  idleUntilTerminated();
}

// The settings with runId taken from the cluster when the chart left it to the pods: the UID of
// the release's ConfigMap, which every ps and worker of one install reads alike.
config::Config withRunId(config::Config settings, const std::map<std::string, std::string>& env,
                         observe::Events& events) {
  if (settings.runId.empty() && !settings.runIdConfigMap.empty()) {
    const auto deadline = apiDeadline(settings.peerTimeoutSeconds);
    const auto api = podApi(env);
    settings.runId = cluster::configMapUid(api, envOr(env, "POD_NAMESPACE"),
                                           settings.runIdConfigMap, deadline,
                                           apiWaiting(events, api));
    log::logger("app")->info("run id {}: the UID of ConfigMap {}", settings.runId,
                             settings.runIdConfigMap);
  }
  return settings;
}

}  // namespace

int runDaemon(const std::vector<std::string>& args) {
  auto env = config::processEnvironment();
  auto loaded = config::load({args, env});
  log::init(loaded.logDir, loaded.logToStdout);
  // Placed before the run id is read (where a process stands does not depend on it), so that
  // a wait for the Kubernetes API is recorded as an event.
  const auto placement =
      cluster::place(loaded, Poco::Environment::nodeName(), envOr(env, "POD_NAMESPACE"));
  observe::Events events(roleName(placement.role), placement.index,
                         loaded.logDir + "/" + observe::kEventsFile);
  const auto settings = withRunId(std::move(loaded), env, events);
  TerminationSignals signals([&events](int signal) {
    const char* name = signal == SIGTERM ? "SIGTERM" : "SIGINT";
    events.emit(observe::event::stopped(name));
    return kExitOk;
  });
  // A worker's BLAS threads are its CPU limit. A ps multiplies factored pushes out on each
  // connection's own thread: its parallelism is its connections, and OpenBLAS threads of its own
  // would only wait for work, spinning on sched_yield, which in a pod with a CPU limit spends
  // the quota the ps needs (200m pods trained 3-4 times slower). Whatever OPENBLAS_NUM_THREADS
  // says, which `pstrain local` sets for its workers.
  if (placement.role == Role::kPs) {
    setBlasThreads(1);
  } else {
    limitBlasThreads(cpuLimit());
  }
  std::string peers;
  for (const auto& endpoint : placement.ps) peers += (peers.empty() ? "" : ",") + endpoint.toString();
  events.emit(observe::event::started(PSTRAIN_VERSION, roleName(placement.role), placement.index,
                                      settings.ps, config::describeMode(settings), peers,
                                      blasCoreInUse(),
                                      describeBlasCore(), blasThreads(), ::getpid(),
                                      net::encodingName(settings.pushEncoding),
                                      net::encodingName(settings.pullEncoding)));
  log::flush();  // who and where, at once
  Reports reports(settings, placement, events);
  reports.progress.setRun(runOf(settings));
  // Run last on SIGTERM: a page that watches this process reads its last events (how the run
  // ended) before it exits; it polls every second.
  signals.addHook([&events] {
    events.awaitReader(std::chrono::seconds(3), std::chrono::seconds(4));
  });
  const bool chief = placement.role == Role::kWorker && placement.index == 0;
  std::optional<serve::ModelSlot> model;
  if (chief) model.emplace("no model yet: worker 0 serves it once training has completed");
  HttpEndpoint http(settings.httpPort, reports.pages(), model ? &*model : nullptr,
                    {settings.modelName, settings.corsOrigin, reports.meters.labels()});
  if (placement.role == Role::kPs) runPs(settings, placement, reports, signals, http.port());
  runWorker(settings, placement, reports, model ? &*model : nullptr,
            currentPs(args, env, placement.ps));
}

}  // namespace pstrain::app
