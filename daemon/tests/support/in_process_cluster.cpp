#include "support/in_process_cluster.hpp"

#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "pstrain/app/role_options.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/observe/status_json.hpp"
#include "support/history_checker.hpp"
#include "support/json.hpp"

namespace pstrain::testing {
namespace {

data::Examples examples(size_t count, std::uint64_t seed) {
  auto synthetic = makeSynthetic(count, seed);
  data::Examples set;
  set.count = count;
  set.rows = 28;
  set.cols = 28;
  set.pixels = std::move(synthetic.pixels);
  set.labels = std::move(synthetic.labels);
  return set;
}

// A ps's end of a channel that shows each frame received to a hook before the ps sees it.
class WatchedChannel : public net::Channel {
 public:
  WatchedChannel(net::Channel& inner, const std::function<void(const net::Incoming&)>& onFrame)
      : inner_(inner), onFrame_(onFrame) {}

  void send(net::MessageType type, const std::vector<std::uint8_t>& fields, const float* values,
            size_t valueCount) override {
    inner_.send(type, fields, values, valueCount);
  }
  const net::Incoming& receive() override {
    const auto& frame = inner_.receive();
    onFrame_(frame);
    return frame;
  }
  void receiveValues(float* destination, size_t expected) override {
    inner_.receiveValues(destination, expected);
  }
  void setReceiveTimeout(double seconds) override { inner_.setReceiveTimeout(seconds); }
  std::string peerName() const override { return inner_.peerName(); }

 private:
  net::Channel& inner_;
  const std::function<void(const net::Incoming&)>& onFrame_;
};

// A worker's channel that its ProcessSignals stop and end.
class SignalledChannel : public net::Channel {
 public:
  // Returns once the worker runs; throws once it is killed.
  using AwaitRunning = std::function<void()>;

  SignalledChannel(std::unique_ptr<net::Channel> inner, AwaitRunning awaitRunning)
      : inner_(std::move(inner)), awaitRunning_(std::move(awaitRunning)) {}

  void send(net::MessageType type, const std::vector<std::uint8_t>& fields, const float* values,
            size_t valueCount) override {
    awaitRunning_();
    inner_->send(type, fields, values, valueCount);
  }
  const net::Incoming& receive() override {
    awaitRunning_();
    return inner_->receive();
  }
  void receiveValues(float* destination, size_t expected) override {
    awaitRunning_();
    inner_->receiveValues(destination, expected);
  }
  void setReceiveTimeout(double seconds) override { inner_->setReceiveTimeout(seconds); }
  std::string peerName() const override { return inner_->peerName(); }

 private:
  std::unique_ptr<net::Channel> inner_;
  AwaitRunning awaitRunning_;
};

}  // namespace

// What SIGSTOP and SIGKILL do to a worker process, done to its channels. SIGSTOP freezes the
// process with its sockets open: its peers see silence, not a connection that ends (cutOff()
// is that other fault), and in sync mode a ps's barrier waits for it. The worker stops at its
// next send, receive or dial, at most a step after the signal, as a process stopped in the
// middle of computing a gradient would. After SIGKILL every one of them throws Killed, which
// none of the client's retries catch: the training thread ends.
class InProcessCluster::ProcessSignals {
 public:
  struct Killed : std::runtime_error {
    Killed() : std::runtime_error("the worker was killed") {}
  };

  void pause(std::chrono::milliseconds duration) {
    std::lock_guard<std::mutex> lock(mutex_);
    resumeAt_ = std::max(resumeAt_, std::chrono::steady_clock::now() + duration);
  }
  void kill() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      killed_ = true;
    }
    signalled_.notify_all();
  }
  void awaitRunning() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!killed_ && std::chrono::steady_clock::now() < resumeAt_) {
      signalled_.wait_until(lock, resumeAt_);
    }
    if (killed_) throw Killed();
  }

 private:
  std::mutex mutex_;
  std::condition_variable signalled_;
  std::chrono::steady_clock::time_point resumeAt_{};
  bool killed_ = false;
};

InProcessCluster::InProcessCluster(Transport transport, const std::vector<std::string>& flags)
    : settings_(config::load({flags, {}})),
      train_(examples(2000, 1)),
      test_(examples(300, 2)),
      network_(ClusterNetwork::make(transport, std::max(settings_.ps, kMaxPs))),
      psCount_(settings_.ps) {
  failpoint::configureFromEnvironment();  // as each pstrain process does at start
}

void InProcessCluster::setPsCount(int count) { psCount_ = std::min(count, kMaxPs); }

InProcessCluster::~InProcessCluster() {
  for (auto& [index, ps] : servers_) ps.server->stop();
  for (auto& [index, ps] : servers_) network_->close(index);
  for (auto& [index, worker] : workers_) {
    if (worker.thread.joinable()) worker.thread.join();
  }
}

std::vector<Poco::JSON::Object::Ptr> InProcessCluster::Reports::eventsNamed(
    const std::string& event) const {
  auto recorded = parseObject(events.since(0))->getArray("events");
  std::vector<Poco::JSON::Object::Ptr> named;
  for (size_t i = 0; i < recorded->size(); ++i) {
    auto e = recorded->getObject(unsigned(i));
    if (e->getValue<std::string>("event") == event) named.push_back(e);
  }
  return named;
}

std::string InProcessCluster::Reports::status() const {
  return progress.role() == Role::kPs ? observe::statusJson(progress, &workers, &meters)
                                      : observe::statusJson(progress);
}

void InProcessCluster::newWorkerReports(WorkerThread& worker, int index) {
  worker.reports =
      std::make_unique<Reports>(Role::kWorker, index, std::uint64_t(settings_.trainSteps));
  auto& reports = *worker.reports;
  worker.reporter = std::make_unique<app::WorkerReporter>(
      index, int(settings_.logEverySteps), reports.progress, reports.meters, reports.events);
}

void InProcessCluster::startPs(int index, std::function<void(const net::Incoming&)> onFrame) {
  auto& ps = servers_[index];
  ps.reports = std::make_unique<Reports>(Role::kPs, index, std::uint64_t(settings_.trainSteps));
  auto& reports = *ps.reports;
  ps.reporter =
      std::make_unique<app::PsReporter>(index, int(settings_.logEverySteps), reports.progress,
                                        reports.meters, reports.workers, reports.events);
  ps.history = newHistory(Role::kPs, index);
  if (ps.history) ps.reporter->recordHistory(*ps.history);
  auto settings = settings_;
  settings.ps = std::max(int(psCount_), index + 1);
  auto options = app::serverOptions(settings, index);
  options.checkpointPath = checkpointPath(index);
  ps.server = std::make_unique<ps::Server>(std::move(options), *ps.reporter);
  auto* server = ps.server.get();
  auto* reporter = ps.reporter.get();
  network_->listen(index, *server, &reports.meters.traffic, reporter,
                   [server, onFrame = std::move(onFrame)](net::Channel& channel) {
                     if (!onFrame) return server->serve(channel);
                     WatchedChannel watched(channel, onFrame);
                     server->serve(watched);
                   });
  server->announce();
}

std::string InProcessCluster::checkpointPath(int index) const {
  return checkpoints_.file("ps-" + std::to_string(index) + ".bin");
}

std::uint64_t InProcessCluster::stopPs(int index) {
  auto& ps = servers_.at(index);
  ps.server->stop();
  network_->close(index);
  const auto step = ps.server->globalStep();
  servers_.erase(index);
  return step;
}

void InProcessCluster::crashPs(int index) {
  servers_.at(index).server->crash();
  network_->close(index);
  servers_.erase(index);
}

void InProcessCluster::pausePs(int index, std::chrono::milliseconds duration) {
  proxy(index).blackHole(duration, FaultProxy::BlackHole::kHold);
}

std::unique_ptr<ps::Client> InProcessCluster::client(
    int index, const std::function<void(ps::ClientOptions&)>& adjust) {
  std::vector<net::Endpoint> ps;
  for (int i = 0; i < settings_.ps; ++i) ps.push_back(psEndpoint(i));
  auto options = app::clientOptions(settings_, index, ps);
  options.currentPs = [this] {
    std::vector<net::Endpoint> now;
    for (int i = 0; i < psCount_; ++i) now.push_back(psEndpoint(i));
    return now;
  };
  options.settingsEverySeconds = 0.01;  // a change is seen within a few steps
  if (adjust) adjust(options);
  auto& worker = workers_[index];
  if (!worker.reports) newWorkerReports(worker, index);
  if (!worker.signals) worker.signals = std::make_shared<ProcessSignals>();
  auto dial = [signals = worker.signals,
               dial = network_->dialer(index, &worker.reports->meters.traffic)](
                  const net::Endpoint& endpoint, std::uint32_t maxPayload) {
    signals->awaitRunning();
    return std::unique_ptr<net::Channel>(std::make_unique<SignalledChannel>(
        dial(endpoint, maxPayload), [signals] { signals->awaitRunning(); }));
  };
  return std::make_unique<ps::Client>(options, std::move(dial), *worker.reporter,
                                      app::recutCoordinator(index, *worker.reporter));
}

void InProcessCluster::startWorker(int index) {
  auto& worker = workers_[index];
  if (worker.thread.joinable()) worker.thread.join();
  newWorkerReports(worker, index);
  worker.client = client(index);
  worker.history = newHistory(Role::kWorker, index, worker.client->incarnation());
  if (worker.history) worker.reporter->recordHistory(*worker.history);
  worker.trainer =
      std::make_unique<worker::Trainer>(app::trainerOptions(settings_, index), *worker.client,
                                        *worker.reporter, worker.reports->meters.traffic);
  worker.thread = std::thread([this, &worker, index] {
    try {
      worker.result = worker.trainer->run(train_, index == 0 ? &test_ : nullptr);
    } catch (const std::exception& e) {
      worker.failure = e.what();
    }
  });
}

std::unique_ptr<observe::HistoryRecorder> InProcessCluster::newHistory(Role role, int index,
                                                                       std::uint64_t incarnation) {
  const auto name = roleName(role) + "-" + std::to_string(index) + "-" +
                    std::to_string(++historyFiles_) + ".history";
  return app::historyRecorder(settings_, role, index, histories_.file(name), incarnation);
}

std::vector<std::string> InProcessCluster::checkHistory() const {
  const auto segments = readHistories({histories_.path()});
  // A check of nothing would pass whatever happened.
  if (segments.empty()) {
    return {"no history was recorded: the cluster runs without --record-history"};
  }
  return checkHistories(segments);
}

void InProcessCluster::pauseWorker(int index, std::chrono::milliseconds duration) {
  workers_.at(index).signals->pause(duration);
}

void InProcessCluster::removeWorker(int index) {
  auto& worker = workers_.at(index);
  worker.signals->kill();
  network_->cutOff(index);  // its sockets close now, as the kernel closes a killed process's
  if (worker.thread.joinable()) worker.thread.join();
  network_->restore(index);
  workers_.erase(index);
}

std::map<int, worker::TrainingResult> InProcessCluster::joinWorkers() {
  std::map<int, worker::TrainingResult> results;
  for (auto& [index, worker] : workers_) {
    if (worker.thread.joinable()) worker.thread.join();
    if (!worker.failure.empty()) throw std::runtime_error("worker " + std::to_string(index) +
                                                          ": " + worker.failure);
    if (worker.trainer) results[index] = worker.result;
  }
  return results;
}

}  // namespace pstrain::testing
