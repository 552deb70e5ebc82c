#pragma once

#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/config/config.hpp"
#include "pstrain/net/connection.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/worker_roster.hpp"

namespace pstrain::observe {

// What one process reports on /metrics and /status, and its record of events (/events,
// events.jsonl). The training code updates it as it goes; every field can be read from the
// HTTP threads at any time.
class Metrics {
 public:
  Metrics(Role role, int ordinal, std::uint64_t trainSteps, Events& events);
  ~Metrics();

  Role role() const { return role_; }
  int ordinal() const { return ordinal_; }

  // Records a change of state as an event too.
  void setState(State state);
  State state() const { return state_; }

  // Records the global step (and, when known, the loss of the step that reached it).
  void recordStep(std::uint64_t globalStep, float loss);
  void recordLocalStep(std::uint64_t localStep) { localStep_ = localStep; }
  void recordAccuracy(double accuracy) { testAccuracy_ = accuracy; }
  void setPeers(std::vector<std::string> peers);

  // What the run trains, for the page's summary (/status `run`).
  struct Run {
    std::string dataDir;
    std::string dataSet;  // worker 0, once it has read the test set: "Fashion-MNIST", ...
    std::vector<int> layers;
    std::string optimizer;
    double learningRate = 0;
    int batchSize = 0;
    bool sync = false;
    double startedAt = 0;  // Unix seconds, this process's start
  };
  void setRun(Run run);
  void setDataSet(std::string name);
  // Worker 0 at the end of the run, before it reports completed: where its model is and how it
  // did (/status `result`); recorded as a `model` event too, so a page that reads the events
  // learns it before the process exits.
  struct Result {
    std::string modelPath;
    std::uint64_t globalStep = 0;
    double testAccuracy = 0;
    double trainingElapsedSeconds = 0;
    double endedAt = 0;  // Unix seconds; set by setResult
  };
  void setResult(Result result);

  // A worker: where a ps answers HTTP (its /status), as it said in its welcome; by ps, in the
  // order they were first recorded. Port 0: it has no HTTP endpoint.
  struct PsHttp {
    std::string ps;  // host:port of its ps port
    std::string host;
    int port = 0;
  };
  void setPsHttp(PsHttp ps);
  std::vector<PsHttp> psHttp() const;

  std::uint64_t globalStep() const { return globalStep_; }
  Events& events() const { return events_; }

  // Counted where they happen (net/ knows nothing of Prometheus); read at each scrape.
  net::TrafficCounters traffic;
  std::atomic<std::uint64_t> reconnects{0};
  std::atomic<std::uint64_t> rejectedConnections{0};
  // A ps: the workers it has heard from, on /status.
  WorkerRoster workers;

  // Seconds a push (worker: its round trip; ps: applying it) and a pull take.
  prometheus::Histogram& pushSeconds();
  prometheus::Histogram& pullSeconds();
  // A ps: the staleness of each applied push, in global steps (ps::Shard::StepResult).
  prometheus::Histogram& staleness();
  // Of the pushes so far: the mean staleness, and the bucket bound the 99th percentile is within.
  struct Staleness {
    std::uint64_t pushes = 0;
    double mean = 0;
    double p99 = 0;
  };
  Staleness stalenessSummary() const;

  // The Prometheus text exposition of everything above.
  std::string prometheusText() const;
  // A JSON object: role, ordinal, state, global step, steps/s, loss, accuracy, peers, BLAS core,
  // the run's settings, a ps's workers and worker 0's result.
  std::string statusJson() const;

 private:
  double stepsPerSecond() const;

  const Role role_;
  const int ordinal_;
  const std::uint64_t trainSteps_;
  Events& events_;
  const std::string blasCore_;  // the OpenBLAS kernels in use: what a slow process computes with
  std::atomic<State> state_{State::kWaiting};
  std::atomic<std::uint64_t> globalStep_{0};
  std::atomic<std::uint64_t> localStep_{0};
  std::atomic<float> loss_;
  std::atomic<double> testAccuracy_;
  // The registry's view of the gauges above, brought up to date by prometheusText().
  std::shared_ptr<prometheus::Registry> registry_;
  struct Exposed;
  std::unique_ptr<Exposed> exposed_;
  class Counters;
  std::unique_ptr<Counters> counters_;

  mutable std::mutex mutex_;  // guards the rest
  std::vector<std::string> peers_;
  std::vector<PsHttp> psHttp_;
  Run run_;
  std::optional<Result> result_;
  // Steps per second over windows of about a second, from the first recorded step.
  bool windowStarted_ = false;
  std::chrono::steady_clock::time_point windowStart_;
  std::uint64_t windowStep_ = 0;
  double rate_ = 0;
};

}  // namespace pstrain::observe
