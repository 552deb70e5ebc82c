#pragma once

#include <Poco/JSON/Object.h>

#include <atomic>
#include <chrono>
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
#include "pstrain/observe/history_recorder.hpp"
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
// worker::Trainer, over memory or over TCP on 127.0.0.1, directly or through fault proxies
// (`transport`). Configured by the daemon's own flags, so it trains what `pstrain run` would.
// With --record-history, every ps and worker records its history into a directory of the
// cluster's, a file for each life of each (a restarted ps, a worker started again), for
// checkHistory(). Its processes read PSTRAIN_FAILPOINTS as pstrain does, when the
// cluster is made.
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
    // The events named `event` it has recorded, in order.
    std::vector<Poco::JSON::Object::Ptr> eventsNamed(const std::string& event) const;

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

  // The ps the workers' settings name now: ps 0 to `count` - 1 (at first the configured number,
  // at most kMaxPs). Worker 0 re-cuts the ps when it changes, as when a ConfigMap changes.
  void setPsCount(int count);
  static constexpr int kMaxPs = 4;

  // Starts ps `index` (one beyond the configured number as the settings name it now:
  // setPsCount); `onFrame`, if given, sees every frame the ps receives first, and an
  // UnreachableError it throws breaks that connection as the ps's death would.
  void startPs(int index, std::function<void(const net::Incoming&)> onFrame = {});
  // Stops ps `index` as SIGTERM does (last checkpoint written) and takes it off the network;
  // returns the global step it stopped at.
  std::uint64_t stopPs(int index);
  // Kills ps `index` as kill -9 does: no checkpoint beyond the periodic ones it wrote
  // (--checkpoint-every-seconds), its channels broken, off the network until startPs(index),
  // which restores the last checkpoint it wrote, if any.
  void crashPs(int index);
  // Pauses ps `index` for `duration`, as SIGSTOP and SIGCONT: every connection to it stays open
  // and carries nothing until then (its proxy's black hole that holds; kTcpThroughProxy only).
  void pausePs(int index, std::chrono::milliseconds duration);
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
  // Pauses worker `index` for `duration` from now, as SIGSTOP and SIGCONT: it sends and
  // receives nothing until then, its connections staying open (see ProcessSignals).
  void pauseWorker(int index, std::chrono::milliseconds duration);
  // Worker `index` dies for good, as kill -9 of a pod scaled away: its channels break at once
  // and its thread ends; joinWorkers() no longer waits for it nor reports it.
  void removeWorker(int index);

  // Takes worker `index` off the network: its channels to every ps break and its dials fail,
  // until restore(index).
  void cutOff(int index) { network_->cutOff(index); }
  void restore(int index) { network_->restore(index); }
  // The proxy in front of ps `index` (Transport::kTcpThroughProxy): its toxics hit every
  // worker's connection to that ps.
  FaultProxy& proxy(int index) { return network_->proxy(index); }

  // A client for worker `index` that the test drives itself, its options changed by `adjust`
  // (to pretend another run or configuration).
  std::unique_ptr<ps::Client> client(int index,
                                     const std::function<void(ps::ClientOptions&)>& adjust = {});

  const data::Examples& trainingSet() const { return train_; }

  // The violations of the run's history (testing::checkHistories), once the run is over; one
  // where none was recorded.
  std::vector<std::string> checkHistory() const;

 private:
  class ProcessSignals;  // SIGSTOP and SIGKILL of a worker, through its channels
  struct PsThread {
    std::unique_ptr<observe::HistoryRecorder> history;  // outlives the reporter that records
    std::unique_ptr<Reports> reports;
    std::unique_ptr<app::PsReporter> reporter;
    std::unique_ptr<ps::Server> server;
  };
  struct WorkerThread {
    std::unique_ptr<observe::HistoryRecorder> history;
    std::unique_ptr<Reports> reports;
    std::unique_ptr<app::WorkerReporter> reporter;
    std::unique_ptr<ps::Client> client;
    std::unique_ptr<worker::Trainer> trainer;
    std::thread thread;
    worker::TrainingResult result;
    std::string failure;
    std::shared_ptr<ProcessSignals> signals;  // shared with its channels
  };

  void newWorkerReports(WorkerThread& worker, int index);
  // The recorder of the next life of `role` `index`, where the settings record the history.
  std::unique_ptr<observe::HistoryRecorder> newHistory(Role role, int index,
                                                       std::uint64_t incarnation = 0);

  TempDir checkpoints_;
  TempDir histories_;
  int historyFiles_ = 0;
  config::Config settings_;
  data::Examples train_;
  data::Examples test_;
  std::unique_ptr<ClusterNetwork> network_;
  std::atomic<int> psCount_;
  std::map<int, PsThread> servers_;
  std::map<int, WorkerThread> workers_;
};

}  // namespace pstrain::testing
