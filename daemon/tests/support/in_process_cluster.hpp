#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/app/ps_reporter.hpp"
#include "pstrain/app/worker_reporter.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/observe/worker_roster.hpp"
#include "pstrain/ps/client.hpp"
#include "pstrain/ps/server.hpp"
#include "pstrain/worker/trainer.hpp"
#include "support/cluster_network.hpp"
#include "support/idx_files.hpp"

namespace pstrain::testing {

// Ps and workers as threads of one process: the real ps::Server, ps::Client and
// worker::Trainer, over memory or over TCP on 127.0.0.1 (`transport`). Configured by the
// daemon's own flags, so it trains what `pstrain run` would.
class InProcessCluster {
 public:
  // What one ps or worker reports, as the daemon keeps it.
  struct Reports {
    Reports(Role role, int index, std::uint64_t trainSteps)
        : events(roleName(role), index),
          progress(role, index, trainSteps, events),
          meters(role, index) {}
    // Its /status.
    std::string status() const;

    observe::Events events;
    observe::Progress progress;
    observe::Meters meters;
    observe::WorkerRoster workers;  // a ps's
  };

  InProcessCluster(Transport transport, const std::vector<std::string>& flags);
  // Ends the workers' channels, stops the ps and waits for every thread.
  ~InProcessCluster();

  const config::Config& settings() const { return settings_; }
  net::Endpoint psEndpoint(int index) const { return network_->psEndpoint(index); }

  // Starts ps `index`; `onFrame`, if given, sees every frame the ps receives first, and an
  // UnreachableError it throws breaks that connection as the ps's death would.
  void startPs(int index, std::function<void(const net::Incoming&)> onFrame = {});
  // Stops ps `index` as SIGTERM does (last checkpoint written) and takes it off the network;
  // returns the global step it stopped at.
  std::uint64_t stopPs(int index);
  // Where ps `index` keeps its checkpoint, across stopPs() and startPs().
  std::string checkpointPath(int index) const;
  ps::Server& server(int index) { return *servers_.at(index).server; }
  Reports& psReports(int index) { return *servers_.at(index).reports; }

  // Runs worker `index`'s training loop on a thread of its own.
  void startWorker(int index);
  // Waits for every started worker to finish; their results, by index. Throws naming a worker
  // whose training failed.
  std::map<int, worker::TrainingResult> joinWorkers();
  Reports& workerReports(int index) { return *workers_.at(index).reports; }

  // Takes worker `index` off the network: its channels to every ps break and its dials fail,
  // until restore(index).
  void cutOff(int index) { network_->cutOff(index); }
  void restore(int index) { network_->restore(index); }

  // A client for worker `index` that the test drives itself, its options changed by `adjust`
  // (to pretend another run or configuration).
  std::unique_ptr<ps::Client> client(int index,
                                     const std::function<void(ps::ClientOptions&)>& adjust = {});

  const data::Examples& trainingSet() const { return train_; }

 private:
  struct PsThread {
    std::unique_ptr<Reports> reports;
    std::unique_ptr<app::PsReporter> reporter;
    std::unique_ptr<ps::Server> server;
  };
  struct WorkerThread {
    std::unique_ptr<Reports> reports;
    std::unique_ptr<app::WorkerReporter> reporter;
    std::unique_ptr<ps::Client> client;
    std::unique_ptr<worker::Trainer> trainer;
    std::thread thread;
    worker::TrainingResult result;
    std::string failure;
  };

  void newWorkerReports(WorkerThread& worker, int index);

  TempDir checkpoints_;
  config::Config settings_;
  data::Examples train_;
  data::Examples test_;
  std::unique_ptr<ClusterNetwork> network_;
  std::map<int, PsThread> servers_;
  std::map<int, WorkerThread> workers_;
};

}  // namespace pstrain::testing
