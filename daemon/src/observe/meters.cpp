#include "pstrain/observe/meters.hpp"

#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

namespace pstrain::observe {
namespace {

// Bounds of the latency histograms, in seconds: a step takes about a millisecond.
const prometheus::Histogram::BucketBoundaries kLatencyBounds{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1.0};

// Bounds of the staleness histogram, in global steps.
const prometheus::Histogram::BucketBoundaries kStalenessBounds{0, 1, 2, 3, 4, 6, 8, 12, 16, 32, 64};

prometheus::Histogram& histogram(prometheus::Registry& r, const prometheus::Labels& l,
                                 const char* name, const char* help,
                                 const prometheus::Histogram::BucketBoundaries& bounds =
                                     kLatencyBounds) {
  return prometheus::BuildHistogram().Name(name).Help(help).Labels(l).Register(r).Add({}, bounds);
}

// A counter read at each scrape: a scrape copies nothing into a registry, so scrapes at the
// same time cannot count twice.
prometheus::MetricFamily counter(const prometheus::Labels& labels, const char* name,
                                 const char* help, const std::atomic<std::uint64_t>& total) {
  prometheus::ClientMetric metric;
  for (const auto& [label, value] : labels) metric.label.push_back({label, value});
  metric.counter.value = double(total.load());
  return {name, help, prometheus::MetricType::Counter, {metric}};
}

}  // namespace

Meters::Meters(Role role, int ordinal)
    : labels_{{"role", roleName(role)}, {"ordinal", std::to_string(ordinal)}},
      registry_(std::make_shared<prometheus::Registry>()),
      pushSeconds_(histogram(*registry_, labels_, "pstrain_push_seconds",
                             "Push latency: round trip (worker), apply (ps).")),
      pullSeconds_(histogram(*registry_, labels_, "pstrain_pull_seconds", "Pull latency.")),
      staleness_(histogram(*registry_, labels_, "pstrain_push_staleness_steps",
                           "Global steps applied between the parameters a push's gradient was "
                           "computed on and the push (ps).",
                           kStalenessBounds)) {}

Meters::~Meters() = default;

void Meters::observePushSeconds(double seconds) { pushSeconds_.Observe(seconds); }
void Meters::observePullSeconds(double seconds) { pullSeconds_.Observe(seconds); }
void Meters::observeStaleness(double steps) { staleness_.Observe(steps); }

Meters::Staleness Meters::stalenessSummary() const {
  const auto metric = staleness_.Collect().histogram;
  Staleness summary;
  summary.pushes = metric.sample_count;
  if (summary.pushes == 0) return summary;
  summary.total = metric.sample_sum;
  summary.mean = metric.sample_sum / double(summary.pushes);
  for (const auto& bucket : metric.bucket) {
    summary.p99 = bucket.upper_bound;
    if (double(bucket.cumulative_count) >= 0.99 * double(summary.pushes)) break;
  }
  return summary;
}

std::vector<prometheus::MetricFamily> Meters::collect() const {
  auto families = registry_->Collect();
  for (auto family :
       {counter(labels_, "pstrain_received_bytes_total", "Bytes received from peers.",
                traffic.received),
        counter(labels_, "pstrain_sent_bytes_total", "Bytes sent to peers.", traffic.sent),
        counter(labels_, "pstrain_reconnects_total", "Connections to a ps made again.",
                reconnects),
        counter(labels_, "pstrain_rejected_connections_total",
                "Connections closed for a protocol or authentication fault.",
                rejectedConnections)}) {
    families.push_back(std::move(family));
  }
  return families;
}

}  // namespace pstrain::observe
