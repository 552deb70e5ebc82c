#include "support/in_process_cluster.hpp"

#include "pstrain/app/role_options.hpp"
#include "pstrain/observe/status_json.hpp"

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

}  // namespace

InProcessCluster::InProcessCluster(Transport transport, const std::vector<std::string>& flags)
    : settings_(config::load({flags, {}})),
      train_(examples(2000, 1)),
      test_(examples(300, 2)),
      network_(ClusterNetwork::make(transport, settings_.ps)) {}

InProcessCluster::~InProcessCluster() {
  for (auto& [index, ps] : servers_) ps.server->stop();
  for (auto& [index, ps] : servers_) network_->close(index);
  for (auto& [index, worker] : workers_) {
    if (worker.thread.joinable()) worker.thread.join();
  }
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
  auto options = app::serverOptions(settings_, index);
  options.checkpointPath = checkpointPath(index);
  ps.server = std::make_unique<ps::Server>(std::move(options), *ps.reporter);
  auto* server = ps.server.get();
  auto* reporter = ps.reporter.get();
  network_->listen(index, *server, &reports.meters.traffic,
                   [reporter](const std::string& address, const std::string& reason) {
                     reporter->rejected(address, reason);
                   },
                   [server, onFrame = std::move(onFrame)](net::Channel& channel) {
                     if (!onFrame) return server->serve(channel);
                     WatchedChannel watched(channel, onFrame);
                     server->serve(watched);
                   });
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

std::unique_ptr<ps::Client> InProcessCluster::client(
    int index, const std::function<void(ps::ClientOptions&)>& adjust) {
  std::vector<net::Endpoint> ps;
  for (int i = 0; i < settings_.ps; ++i) ps.push_back(psEndpoint(i));
  auto options = app::clientOptions(settings_, index, ps);
  if (adjust) adjust(options);
  auto& worker = workers_[index];
  if (!worker.reports) newWorkerReports(worker, index);
  return std::make_unique<ps::Client>(options,
                                      network_->dialer(index, &worker.reports->meters.traffic),
                                      *worker.reporter);
}

void InProcessCluster::startWorker(int index) {
  auto& worker = workers_[index];
  if (worker.thread.joinable()) worker.thread.join();
  newWorkerReports(worker, index);
  worker.client = client(index);
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
