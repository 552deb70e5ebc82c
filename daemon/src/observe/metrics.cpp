#include "pstrain/observe/metrics.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/cpu_limit.hpp"

namespace pstrain::observe {
namespace {

using Clock = std::chrono::steady_clock;

// Bounds of the latency histograms, in seconds: a step takes about a millisecond.
const prometheus::Histogram::BucketBoundaries kLatencyBounds{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1.0};

template <typename Builder>
auto& family(Builder builder, prometheus::Registry& registry, const prometheus::Labels& labels,
             const char* name, const char* help) {
  return builder.Name(name).Help(help).Labels(labels).Register(registry);
}

prometheus::Gauge& gauge(prometheus::Registry& r, const prometheus::Labels& l, const char* name,
                         const char* help) {
  return family(prometheus::BuildGauge(), r, l, name, help).Add({});
}

// Bounds of the staleness histogram, in global steps.
const prometheus::Histogram::BucketBoundaries kStalenessBounds{0, 1, 2, 3, 4, 6, 8, 12, 16, 32, 64};

prometheus::Histogram& histogram(prometheus::Registry& r, const prometheus::Labels& l,
                                 const char* name, const char* help,
                                 const prometheus::Histogram::BucketBoundaries& bounds =
                                     kLatencyBounds) {
  return family(prometheus::BuildHistogram(), r, l, name, help).Add({}, bounds);
}

prometheus::Labels labelsOf(Role role, int ordinal) {
  return {{"role", roleName(role)}, {"ordinal", std::to_string(ordinal)}};
}

}  // namespace

// The counters counted where they happen (net/ and the worker know nothing of Prometheus), read
// at each scrape: a scrape copies nothing into the registry, so scrapes at the same time cannot
// count twice.
class Metrics::Counters : public prometheus::Collectable {
 public:
  Counters(const Metrics& metrics, const prometheus::Labels& labels) : metrics_(metrics) {
    for (const auto& [name, value] : labels) labels_.push_back({name, value});
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    return {family("pstrain_received_bytes_total", "Bytes received from peers.",
                   metrics_.traffic.received),
            family("pstrain_sent_bytes_total", "Bytes sent to peers.", metrics_.traffic.sent),
            family("pstrain_reconnects_total", "Connections to a ps made again.",
                   metrics_.reconnects),
            family("pstrain_rejected_connections_total",
                   "Connections closed for a protocol or authentication fault.",
                   metrics_.rejectedConnections)};
  }

 private:
  prometheus::MetricFamily family(const char* name, const char* help,
                                  const std::atomic<std::uint64_t>& total) const {
    prometheus::ClientMetric metric;
    metric.label = labels_;
    metric.counter.value = double(total.load());
    return {name, help, prometheus::MetricType::Counter, {metric}};
  }

  const Metrics& metrics_;
  std::vector<prometheus::ClientMetric::Label> labels_;
};

// Every metric of /metrics, with the labels role and ordinal.
struct Metrics::Exposed {
  Exposed(prometheus::Registry& r, const prometheus::Labels& l, const std::string& blasCore)
      : globalStep(
            gauge(r, l, "pstrain_global_step", "Global steps applied (ps) or seen (worker).")),
        trainSteps(gauge(r, l, "pstrain_train_steps", "Global steps the run trains for.")),
        localStep(gauge(r, l, "pstrain_local_step", "Steps this worker has completed.")),
        stepsPerSecond(
            gauge(r, l, "pstrain_steps_per_second", "Global steps per second, last second.")),
        loss(gauge(r, l, "pstrain_loss", "Training loss of the latest step.")),
        testAccuracy(gauge(r, l, "pstrain_test_accuracy", "Latest test accuracy (worker 0).")),
        state(family(prometheus::BuildGauge(), r, l, "pstrain_state",
                     "1 for the current state of the process.")),
        pushSeconds(histogram(r, l, "pstrain_push_seconds",
                              "Push latency: round trip (worker), apply (ps).")),
        pullSeconds(histogram(r, l, "pstrain_pull_seconds", "Pull latency.")),
        staleness(histogram(r, l, "pstrain_push_staleness_steps",
                            "Global steps applied between the parameters a push's gradient was "
                            "computed on and the push (ps).",
                            kStalenessBounds)) {
    family(prometheus::BuildGauge(), r, l, "pstrain_build_info",
           "1, labelled with the version and BLAS kernels.")
        .Add({{"blas_core", blasCore}, {"version", PSTRAIN_VERSION}})
        .Set(1);
  }

  prometheus::Gauge& globalStep;
  prometheus::Gauge& trainSteps;
  prometheus::Gauge& localStep;
  prometheus::Gauge& stepsPerSecond;
  prometheus::Gauge& loss;
  prometheus::Gauge& testAccuracy;
  prometheus::Family<prometheus::Gauge>& state;
  prometheus::Histogram& pushSeconds;
  prometheus::Histogram& pullSeconds;
  prometheus::Histogram& staleness;
};

Metrics::Metrics(Role role, int ordinal, std::uint64_t trainSteps, Events& events)
    : role_(role),
      ordinal_(ordinal),
      trainSteps_(trainSteps),
      events_(events),
      blasCore_(blasCoreInUse()),
      loss_(std::numeric_limits<float>::quiet_NaN()),
      testAccuracy_(std::numeric_limits<double>::quiet_NaN()),
      registry_(std::make_shared<prometheus::Registry>()),
      exposed_(std::make_unique<Exposed>(*registry_, labelsOf(role, ordinal), blasCore_)),
      counters_(std::make_unique<Counters>(*this, labelsOf(role, ordinal))) {
  events_.emit(event::state(state_));
}

Metrics::~Metrics() = default;

prometheus::Histogram& Metrics::pushSeconds() { return exposed_->pushSeconds; }
prometheus::Histogram& Metrics::pullSeconds() { return exposed_->pullSeconds; }
prometheus::Histogram& Metrics::staleness() { return exposed_->staleness; }

Metrics::Staleness Metrics::stalenessSummary() const {
  const auto metric = exposed_->staleness.Collect().histogram;
  Staleness summary;
  summary.pushes = metric.sample_count;
  if (summary.pushes == 0) return summary;
  summary.mean = metric.sample_sum / double(summary.pushes);
  for (const auto& bucket : metric.bucket) {
    summary.p99 = bucket.upper_bound;
    if (double(bucket.cumulative_count) >= 0.99 * double(summary.pushes)) break;
  }
  return summary;
}

void Metrics::setState(State state) {
  if (state_.exchange(state) != state) events_.emit(event::state(state));
}

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

void Metrics::setPsHttp(PsHttp ps) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& known : psHttp_) {
    if (known.ps == ps.ps) {
      known = std::move(ps);
      return;
    }
  }
  psHttp_.push_back(std::move(ps));
}

void Metrics::setRun(Run run) {
  std::lock_guard<std::mutex> lock(mutex_);
  run_ = std::move(run);
}

void Metrics::setDataSet(std::string name) {
  std::lock_guard<std::mutex> lock(mutex_);
  run_.dataSet = std::move(name);
}

void Metrics::setResult(Result result) {
  const Event recorded = event::model(result.modelPath, result.globalStep, result.testAccuracy,
                                      result.trainingElapsedSeconds);
  result.endedAt = recorded.time;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    result_ = std::move(result);
  }
  events_.emit(recorded);
}

std::vector<Metrics::PsHttp> Metrics::psHttp() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return psHttp_;
}

double Metrics::stepsPerSecond() const {
  if (state_ != State::kTraining) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  return rate_;
}

std::string Metrics::prometheusText() const {
  auto& e = *exposed_;
  e.globalStep.Set(double(globalStep_));
  e.trainSteps.Set(double(trainSteps_));
  e.localStep.Set(double(localStep_));
  e.stepsPerSecond.Set(stepsPerSecond());
  e.loss.Set(double(loss_.load()));
  e.testAccuracy.Set(testAccuracy_.load());
  for (State s : {State::kWaiting, State::kTraining, State::kCompleted}) {
    e.state.Add({{"state", stateName(s)}}).Set(s == state_ ? 1 : 0);
  }
  auto families = registry_->Collect();
  auto counted = counters_->Collect();
  families.insert(families.end(), counted.begin(), counted.end());
  return prometheus::TextSerializer().Serialize(families);
}

std::string Metrics::statusJson() const {
  Poco::JSON::Object json(Poco::JSON_PRESERVE_KEY_ORDER);
  json.set("role", roleName(role_));
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
  Poco::JSON::Object run(Poco::JSON_PRESERVE_KEY_ORDER);
  std::optional<Poco::JSON::Object> result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& peer : peers_) peers.add(peer);
    run.set("data_dir", run_.dataDir);
    if (!run_.dataSet.empty()) run.set("data_set", run_.dataSet);
    Poco::JSON::Array layers;
    for (int width : run_.layers) layers.add(width);
    run.set("layers", layers);
    run.set("optimizer", run_.optimizer);
    run.set("learning_rate", run_.learningRate);
    run.set("batch_size", run_.batchSize);
    run.set("sync", run_.sync);
    run.set("started_at", run_.startedAt);
    if (result_) {
      result.emplace(Poco::JSON_PRESERVE_KEY_ORDER);
      result->set("model_path", result_->modelPath);
      result->set("global_step", result_->globalStep);
      result->set("test_accuracy", result_->testAccuracy);
      result->set("training_elapsed_s", result_->trainingElapsedSeconds);
      result->set("ended_at", result_->endedAt);
    }
  }
  json.set("peers", peers);
  json.set("run", run);
  if (result) json.set("result", *result);
  json.set("blas_core", blasCore_);
  json.set("blas_threads", blasThreads());
  if (role_ == Role::kPs) {
    json.set("workers", workers.json());
    const auto staleness = stalenessSummary();
    if (staleness.pushes > 0) {
      Poco::JSON::Object summary(Poco::JSON_PRESERVE_KEY_ORDER);
      summary.set("mean", staleness.mean);
      summary.set("p99", staleness.p99);
      json.set("staleness", summary);
    }
  }
  std::ostringstream out;
  json.stringify(out);
  return out.str();
}

}  // namespace pstrain::observe
