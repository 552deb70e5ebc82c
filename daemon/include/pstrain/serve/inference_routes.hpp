#pragma once

#include <functional>
#include <optional>
#include <string>

#include "pstrain/serve/http_reply.hpp"
#include "pstrain/serve/predictor.hpp"
#include "pstrain/serve/request_metrics.hpp"

namespace pstrain::serve {

// The model server's HTTP routes, for the model in a slot named `modelName`:
//   POST /predict[?inputs=true]              this project's own: JSON images or a PNG (and
//                                            the inputs the model computed on)
//   GET  /model                              layers, source, data set and class names
//   GET  /v2, /v2/health/live, /v2/health/ready, /v2/models/{name}, /v2/models/{name}/ready,
//   POST /v2/models/{name}/infer             the Open Inference Protocol (KServe v2)
//   GET  /v1/models/{name}, /v1/models/{name}/metadata, POST /v1/models/{name}:predict
//                                            TensorFlow Serving's REST API
// The v2 and TF Serving paths may name the model's one version, /versions/1, before their end.
// Every refusal is JSON {"error": "..."} (a 405 with Allow); every request is counted and timed.
class InferenceRoutes {
 public:
  // `metricLabels`: the process's, on every metric of its requests.
  InferenceRoutes(const ModelSlot* model, std::string modelName,
                  const prometheus::Labels& metricLabels)
      : model_(model), modelName_(std::move(modelName)), metrics_(metricLabels) {}

  // The answer to `method` `path` if the path is one of these routes, else nullopt. `query`:
  // the URI's raw query, without '?'. `readBody` reads the request's body within the server's
  // size and time limits.
  std::optional<HttpReply> answer(const std::string& method, const std::string& path,
                                  const std::string& query, const std::string& contentType,
                                  const std::function<std::string()>& readBody);

  const RequestMetrics& metrics() const { return metrics_; }
  const std::string& modelName() const { return modelName_; }

  struct Route;  // a path pattern and what answers it

 private:
  HttpReply route(const Route& route, const std::string& method, const std::string& query,
                  const std::string& contentType,
                  const std::function<std::string()>& readBody) const;
  std::shared_ptr<Predictor> predictor() const;

  const ModelSlot* model_;
  const std::string modelName_;
  RequestMetrics metrics_;
};

}  // namespace pstrain::serve
