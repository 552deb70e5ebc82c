#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/app/http_server.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/serve/inference_routes.hpp"
#include "pstrain/serve/predictor.hpp"

namespace pstrain::app {

// The HTTP face of a process, for probes, Prometheus and people:
//   /          the page: live state, curves, and a digit to draw once there is a model
//   /healthz   200 while the process serves at all
//   /readyz    200 once it is connected to its peers (training) and when completed, else 503
//   /metrics   Prometheus text exposition
//   /status    JSON: role, ordinal, state, global step, peers
//   /events    JSON: the latest events after ?after=N (Events::since)
//   /history   JSON: the whole run's curves (Events::history)
//   /cluster   worker: every ps's /status
//   /model, /predict, /v2/..., /v1/models/...   the model server (serve::InferenceRoutes)
// It lives in app/, beside the commands that assemble it: observe/ renders what a process
// reports, serve/ answers inference, and neither depends on the other.
// `pages` is absent for `pstrain serve`, which trains nothing; `model` is null where no model
// is served (every process but worker 0). The server (HttpServer) keeps connections alive and
// answers every refusal with JSON; a port another process holds is a ListenError.
class HttpEndpoint {
 public:
  // What a training process shows: renderings and its record of events, read at each request.
  struct Pages {
    std::function<std::string()> metrics;   // /metrics
    std::function<std::string()> status;    // /status
    std::function<observe::State()> state;  // /readyz
    observe::Events* events = nullptr;      // /events, /history
    // A worker: where each ps answers HTTP, for /cluster; unset for a ps.
    std::function<std::vector<observe::Progress::PsHttp>()> psHttp;
  };

  struct Options {
    std::string modelName;   // in the v2 and TF Serving paths (config modelName)
    std::string corsOrigin;  // Access-Control-Allow-Origin; empty: none
    prometheus::Labels metricLabels;  // the process's role and ordinal, on the model server's
  };

  HttpEndpoint(int port, std::optional<Pages> pages, const serve::ModelSlot* model,
               const Options& options);
  ~HttpEndpoint();

  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const;

 private:
  const std::optional<Pages> pages_;
  serve::InferenceRoutes routes_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace pstrain::app
