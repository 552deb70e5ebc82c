#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"
#include "pstrain/observe/events.hpp"

namespace pstrain::observe {

// Where one process is in its run: its state, steps, loss and accuracy, what it trains, its
// peers and, for worker 0, its result. The training code records it as it goes; /status,
// /metrics and /readyz read it from the HTTP threads at any time. A change of state and the
// result are recorded as events too.
class Progress {
 public:
  Progress(Role role, int ordinal, std::uint64_t trainSteps, Events& events);

  Role role() const { return role_; }
  int ordinal() const { return ordinal_; }
  std::uint64_t trainSteps() const { return trainSteps_; }

  void setState(State state);
  State state() const { return state_; }

  // Records the global step (and, when known, the loss of the step that reached it).
  void recordStep(std::uint64_t globalStep, float loss);
  void recordLocalStep(std::uint64_t localStep) { localStep_ = localStep; }
  void recordAccuracy(double accuracy) { testAccuracy_ = accuracy; }

  std::uint64_t globalStep() const { return globalStep_; }
  std::uint64_t localStep() const { return localStep_; }
  float loss() const { return loss_; }                   // NaN until known
  double testAccuracy() const { return testAccuracy_; }  // NaN until known
  // Global steps per second over the last second or so; 0 unless training.
  double stepsPerSecond() const;

  void setPeers(std::vector<std::string> peers);
  std::vector<std::string> peers() const;

  // What the run trains, for the page's summary (/status `run`).
  struct Run {
    std::string dataDir;
    std::string dataSet;  // worker 0, once it has read the test set: "Fashion-MNIST", ...
    std::vector<int> layers;
    std::string optimizer;
    double learningRate = 0;
    int batchSize = 0;
    bool sync = false;
    std::string pushEncoding, pullEncoding;  // net::WireEncoding's names
    double startedAt = 0;  // Unix seconds, this process's start
  };
  void setRun(Run run);
  void setDataSet(std::string name);
  Run run() const;

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
  std::optional<Result> result() const;

  // A worker: where a ps answers HTTP (its /status), as it said in its welcome; by ps, in the
  // order they were first recorded. Port 0: it has no HTTP endpoint.
  struct PsHttp {
    std::string ps;  // host:port of its ps port
    std::string host;
    int port = 0;
  };
  void setPsHttp(PsHttp ps);
  std::vector<PsHttp> psHttp() const;

  // A ps: the parameters it serves, [offset, offset + count), as ps `index` of `psCount` in cut
  // `generation`; count 0 once a re-cut has left it out of the run (/status `cut`).
  struct Cut {
    std::uint64_t generation = 0;
    int psCount = 0;
    int index = 0;
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
  };
  void setCut(Cut cut);
  std::optional<Cut> cut() const;

 private:
  const Role role_;
  const int ordinal_;
  const std::uint64_t trainSteps_;
  Events& events_;
  std::atomic<State> state_{State::kWaiting};
  std::atomic<std::uint64_t> globalStep_{0};
  std::atomic<std::uint64_t> localStep_{0};
  std::atomic<float> loss_;
  std::atomic<double> testAccuracy_;

  mutable std::mutex mutex_;  // guards the rest
  std::vector<std::string> peers_;
  std::vector<PsHttp> psHttp_;
  Run run_;
  std::optional<Result> result_;
  std::optional<Cut> cut_;
  // Steps per second over windows of about a second, from the first recorded step.
  bool windowStarted_ = false;
  std::chrono::steady_clock::time_point windowStart_;
  std::uint64_t windowStep_ = 0;
  double rate_ = 0;
};

}  // namespace pstrain::observe
