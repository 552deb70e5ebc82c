#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

namespace pstrain::serve {

// Requests to the model server's routes, for Prometheus: pstrain_inference_requests_total
// {route, code} and the histogram pstrain_inference_request_duration_seconds{route}, where
// route is the path's pattern (/v2/models/{name}/infer), so the labels stay few. Each also
// carries `labels`, the process's (role and ordinal), as its training metrics do.
class RequestMetrics {
 public:
  explicit RequestMetrics(const prometheus::Labels& labels);

  void record(const std::string& route, int status, double seconds);
  // The Prometheus text exposition of these metrics.
  std::string prometheusText() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& durations_;
};

}  // namespace pstrain::serve
