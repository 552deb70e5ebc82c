#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "pstrain/config/config.hpp"
#include "pstrain/net/connection.hpp"

namespace pstrain::observe {

// A Prometheus histogram of durations in seconds, safe to observe from any thread.
class Histogram {
 public:
  static constexpr std::array<double, 10> kBounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                  0.005,  0.01,    0.025,  0.1,   1.0};

  void observe(double seconds);
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::array<std::atomic<std::uint64_t>, kBounds.size() + 1> buckets_{};  // last: +Inf
  std::atomic<std::uint64_t> sumNanoseconds_{0};
};

enum class State { kWaiting, kTraining, kCompleted };
std::string stateName(State state);

// What one process reports on /metrics and /status. The training code updates it as it goes;
// every field can be read from the HTTP threads at any time.
class Metrics {
 public:
  Metrics(config::Role role, int ordinal, std::uint64_t trainSteps);

  config::Role role() const { return role_; }
  int ordinal() const { return ordinal_; }

  void setState(State state) { state_ = state; }
  State state() const { return state_; }

  // Records the global step (and, when known, the loss of the step that reached it).
  void recordStep(std::uint64_t globalStep, float loss);
  void recordLocalStep(std::uint64_t localStep) { localStep_ = localStep; }
  void recordAccuracy(double accuracy) { testAccuracy_ = accuracy; }
  void setPeers(std::vector<std::string> peers);

  std::uint64_t globalStep() const { return globalStep_; }

  net::TrafficCounters traffic;
  std::atomic<std::uint64_t> reconnects{0};
  std::atomic<std::uint64_t> rejectedConnections{0};
  Histogram pushSeconds;
  Histogram pullSeconds;

  // The Prometheus text exposition of everything above.
  std::string prometheusText() const;
  // A JSON object: role, ordinal, state, global step, steps/s, loss, accuracy, peers, BLAS core.
  std::string statusJson() const;

 private:
  double stepsPerSecond() const;

  const config::Role role_;
  const int ordinal_;
  const std::uint64_t trainSteps_;
  const std::string blasCore_;  // the OpenBLAS kernels in use: what a slow process computes with
  std::atomic<State> state_{State::kWaiting};
  std::atomic<std::uint64_t> globalStep_{0};
  std::atomic<std::uint64_t> localStep_{0};
  std::atomic<float> loss_;
  std::atomic<double> testAccuracy_;

  mutable std::mutex mutex_;  // guards the rest
  std::vector<std::string> peers_;
  // Steps per second over windows of about a second, from the first recorded step.
  bool windowStarted_ = false;
  std::chrono::steady_clock::time_point windowStart_;
  std::uint64_t windowStep_ = 0;
  double rate_ = 0;
};

}  // namespace pstrain::observe
