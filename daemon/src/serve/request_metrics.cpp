#include "pstrain/serve/request_metrics.hpp"

#include <prometheus/text_serializer.h>

namespace pstrain::serve {
namespace {

// From a single image (about 0.1 ms) to a full 8 MiB batch (about a second).
const prometheus::Histogram::BucketBoundaries kDurationBounds{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};

}  // namespace

RequestMetrics::RequestMetrics(const prometheus::Labels& labels)
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("pstrain_inference_requests_total")
                    .Help("Requests to the model server's routes, by route and status code")
                    .Labels(labels)
                    .Register(*registry_)),
      durations_(prometheus::BuildHistogram()
                     .Name("pstrain_inference_request_duration_seconds")
                     .Help("Time from a request's headers to its answer, body read included")
                     .Labels(labels)
                     .Register(*registry_)) {}

void RequestMetrics::record(const std::string& route, int status, double seconds) {
  requests_.Add({{"route", route}, {"code", std::to_string(status)}}).Increment();
  durations_.Add({{"route", route}}, kDurationBounds).Observe(seconds);
}

std::string RequestMetrics::prometheusText() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace pstrain::serve
