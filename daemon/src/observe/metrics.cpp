#include "pstrain/observe/metrics.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "pstrain/common/blas_core.hpp"

namespace pstrain::observe {
namespace {

using Clock = std::chrono::steady_clock;

std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  std::ostringstream out;
  out.precision(10);
  out << value;
  return out.str();
}

void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name + "{" + labels + "} " + number(value) + "\n";
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

void Histogram::observe(double seconds) {
  size_t bucket = 0;
  while (bucket < kBounds.size() && seconds > kBounds[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sumNanoseconds_.fetch_add(std::uint64_t(seconds * 1e9), std::memory_order_relaxed);
}

void Histogram::render(std::string& out, const std::string& name,
                       const std::string& labels) const {
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i <= kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    std::string le = i < kBounds.size() ? number(kBounds[i]) : "+Inf";
    sample(out, name + "_bucket", labels + ",le=\"" + le + "\"", double(cumulative));
  }
  sample(out, name + "_sum", labels, double(sumNanoseconds_.load()) / 1e9);
  sample(out, name + "_count", labels, double(cumulative));
}

std::string stateName(State state) {
  switch (state) {
    case State::kWaiting: return "waiting";
    case State::kTraining: return "training";
    case State::kCompleted: return "completed";
  }
  return "unknown";
}

Metrics::Metrics(config::Role role, int ordinal, std::uint64_t trainSteps)
    : role_(role),
      ordinal_(ordinal),
      trainSteps_(trainSteps),
      blasCore_(blasCoreInUse()),
      loss_(std::numeric_limits<float>::quiet_NaN()),
      testAccuracy_(std::numeric_limits<double>::quiet_NaN()) {}

void Metrics::recordStep(std::uint64_t globalStep, float loss) {
  globalStep_ = globalStep;
  if (!std::isnan(loss)) loss_ = loss;
  auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!windowStarted_) {  // the first step starts the clock: start-up is not training time
    windowStarted_ = true;
    windowStart_ = now;
    windowStep_ = globalStep;
    return;
  }
  double seconds = std::chrono::duration<double>(now - windowStart_).count();
  if (seconds >= 1.0) {
    rate_ = double(globalStep - windowStep_) / seconds;
    windowStart_ = now;
    windowStep_ = globalStep;
  }
}

void Metrics::setPeers(std::vector<std::string> peers) {
  std::lock_guard<std::mutex> lock(mutex_);
  peers_ = std::move(peers);
}

double Metrics::stepsPerSecond() const {
  if (state_ != State::kTraining) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  return rate_;
}

std::string Metrics::prometheusText() const {
  const std::string labels = "role=\"" + config::roleName(role_) + "\",ordinal=\"" +
                             std::to_string(ordinal_) + "\"";
  std::string out;
  header(out, "pstrain_build_info", "gauge", "1, labelled with the version and BLAS kernels.");
  sample(out, "pstrain_build_info",
         labels + ",blas_core=\"" + blasCore_ + "\",version=\"" PSTRAIN_VERSION "\"", 1);
  header(out, "pstrain_global_step", "gauge", "Global steps applied (ps) or seen (worker).");
  sample(out, "pstrain_global_step", labels, double(globalStep_));
  header(out, "pstrain_train_steps", "gauge", "Global steps the run trains for.");
  sample(out, "pstrain_train_steps", labels, double(trainSteps_));
  header(out, "pstrain_local_step", "gauge", "Steps this worker has completed.");
  sample(out, "pstrain_local_step", labels, double(localStep_));
  header(out, "pstrain_steps_per_second", "gauge", "Global steps per second, last second.");
  sample(out, "pstrain_steps_per_second", labels, stepsPerSecond());
  header(out, "pstrain_loss", "gauge", "Training loss of the latest step.");
  sample(out, "pstrain_loss", labels, double(loss_.load()));
  header(out, "pstrain_test_accuracy", "gauge", "Latest test accuracy (worker 0).");
  sample(out, "pstrain_test_accuracy", labels, testAccuracy_.load());
  header(out, "pstrain_state", "gauge", "1 for the current state of the process.");
  for (State s : {State::kWaiting, State::kTraining, State::kCompleted}) {
    sample(out, "pstrain_state", labels + ",state=\"" + stateName(s) + "\"", s == state_ ? 1 : 0);
  }
  header(out, "pstrain_received_bytes_total", "counter", "Bytes received from peers.");
  sample(out, "pstrain_received_bytes_total", labels, double(traffic.received));
  header(out, "pstrain_sent_bytes_total", "counter", "Bytes sent to peers.");
  sample(out, "pstrain_sent_bytes_total", labels, double(traffic.sent));
  header(out, "pstrain_reconnects_total", "counter", "Connections to a ps made again.");
  sample(out, "pstrain_reconnects_total", labels, double(reconnects));
  header(out, "pstrain_rejected_connections_total", "counter",
         "Connections closed for a protocol or authentication fault.");
  sample(out, "pstrain_rejected_connections_total", labels, double(rejectedConnections));
  header(out, "pstrain_push_seconds", "histogram", "Push latency: round trip (worker), apply (ps).");
  pushSeconds.render(out, "pstrain_push_seconds", labels);
  header(out, "pstrain_pull_seconds", "histogram", "Pull latency.");
  pullSeconds.render(out, "pstrain_pull_seconds", labels);
  return out;
}

std::string Metrics::statusJson() const {
  Poco::JSON::Object json(Poco::JSON_PRESERVE_KEY_ORDER);
  json.set("role", config::roleName(role_));
  json.set("ordinal", ordinal_);
  json.set("state", stateName(state_));
  json.set("global_step", globalStep_.load());
  json.set("train_steps", trainSteps_);
  json.set("local_step", localStep_.load());
  json.set("steps_per_second", stepsPerSecond());
  float loss = loss_;
  if (!std::isnan(loss)) json.set("loss", double(loss));
  double accuracy = testAccuracy_;
  if (!std::isnan(accuracy)) json.set("test_accuracy", accuracy);
  Poco::JSON::Array peers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& peer : peers_) peers.add(peer);
  }
  json.set("peers", peers);
  json.set("blas_core", blasCore_);
  std::ostringstream out;
  json.stringify(out);
  return out.str();
}

}  // namespace pstrain::observe
