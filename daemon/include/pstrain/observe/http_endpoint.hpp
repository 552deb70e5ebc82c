#pragma once

#include <Poco/Net/HTTPServer.h>

#include <memory>
#include <string_view>

#include "pstrain/observe/metrics.hpp"
#include "pstrain/serve/predictor.hpp"

namespace pstrain::observe {

// The page at / (daemon/src/observe/page.html, embedded at build time).
extern const std::string_view kPageHtml;

// The HTTP face of a process, for probes, Prometheus and people:
//   /          the page: live state, curves, and a digit to draw once there is a model
//   /healthz   200 while the process serves at all
//   /readyz    200 once it is connected to its peers (training) and when completed, else 503
//   /metrics   Prometheus text exposition
//   /status    JSON: role, ordinal, state, global step, peers
//   /events    JSON: the latest events after ?after=N (Events::since)
//   /model     JSON: the model's layers and source, or 503 and why there is none yet
//   /predict   POST images, answer classes and probabilities (where there is a model slot)
// `metrics` is null for `pstrain serve`, which trains nothing; `model` is null where no model
// is served (every process but worker 0).
class HttpEndpoint {
 public:
  HttpEndpoint(int port, const Metrics* metrics, const serve::ModelSlot* model = nullptr);
  ~HttpEndpoint();

  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const;

 private:
  std::unique_ptr<Poco::Net::HTTPServer> server_;
};

}  // namespace pstrain::observe
