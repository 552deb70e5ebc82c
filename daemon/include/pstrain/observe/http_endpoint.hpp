#pragma once

#include <Poco/Net/HTTPServer.h>

#include <memory>
#include <string_view>

#include "pstrain/observe/metrics.hpp"
#include "pstrain/serve/inference_routes.hpp"
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
//   /model, /predict, /v2/..., /v1/models/...   the model server (serve::InferenceRoutes)
// `metrics` is null for `pstrain serve`, which trains nothing; `model` is null where no model
// is served (every process but worker 0). Connections are kept alive; a port another process
// holds is a ListenError.
class HttpEndpoint {
 public:
  struct Options {
    std::string modelName;   // in the v2 and TF Serving paths (config modelName)
    std::string corsOrigin;  // Access-Control-Allow-Origin; empty: none
  };

  HttpEndpoint(int port, const Metrics* metrics, const serve::ModelSlot* model,
               const Options& options);
  ~HttpEndpoint();

  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const;

 private:
  serve::InferenceRoutes routes_;
  std::unique_ptr<Poco::Net::HTTPServer> server_;
};

}  // namespace pstrain::observe
