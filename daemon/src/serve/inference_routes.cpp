#include "pstrain/serve/inference_routes.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/URI.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>

#include "pstrain/serve/image_inputs.hpp"
#include "pstrain/serve/open_inference.hpp"
#include "pstrain/serve/predict_request.hpp"
#include "pstrain/serve/request_error.hpp"
#include "pstrain/serve/tf_serving.hpp"

namespace pstrain::serve {

enum class Endpoint {
  kPredict,
  kModel,
  kServerMetadata,
  kServerLive,
  kServerReady,
  kModelMetadata,
  kModelReady,
  kInfer,
  kTfModelStatus,
  kTfModelMetadata,
  kTfPredict,
};

struct InferenceRoutes::Route {
  Endpoint endpoint;
  std::string pattern;  // its metrics label
  bool post;            // POST, else GET (or HEAD)
  std::string model;    // the model named in the path, if any
  std::string version;  // the version named in the path, if any
};

namespace {

using Route = InferenceRoutes::Route;

bool startsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A path under `prefix` naming a model, as v2 and TF Serving both spell it:
// {name}[/versions/{version}][/rest...].
struct ModelPath {
  std::string model;
  std::string version;
  std::vector<std::string> rest;
};

std::optional<ModelPath> modelPath(const std::string& path, const std::string& prefix) {
  if (!startsWith(path, prefix)) return std::nullopt;
  std::vector<std::string> parts;
  for (size_t at = prefix.size();;) {
    const size_t slash = path.find('/', at);
    parts.push_back(path.substr(at, slash - at));
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  ModelPath out{parts[0], "", {}};
  size_t next = 1;
  if (parts.size() >= 3 && parts[1] == "versions") {
    out.version = parts[2];
    next = 3;
  }
  if (out.model.empty() || (next == 3 && out.version.empty())) return std::nullopt;
  out.rest.assign(parts.begin() + long(next), parts.end());
  return out;
}

std::optional<Route> match(const std::string& path) {
  if (path == "/predict") return Route{Endpoint::kPredict, "/predict", true, "", ""};
  if (path == "/model") return Route{Endpoint::kModel, "/model", false, "", ""};
  if (path == "/v2" || path == "/v2/") {
    return Route{Endpoint::kServerMetadata, "/v2", false, "", ""};
  }
  if (path == "/v2/health/live") {
    return Route{Endpoint::kServerLive, "/v2/health/live", false, "", ""};
  }
  if (path == "/v2/health/ready") {
    return Route{Endpoint::kServerReady, "/v2/health/ready", false, "", ""};
  }
  if (auto p = modelPath(path, "/v2/models/")) {
    const std::string at =
        p->version.empty() ? "/v2/models/{name}" : "/v2/models/{name}/versions/{version}";
    if (p->rest.empty()) return Route{Endpoint::kModelMetadata, at, false, p->model, p->version};
    if (p->rest.size() != 1) return std::nullopt;
    if (p->rest[0] == "ready") {
      return Route{Endpoint::kModelReady, at + "/ready", false, p->model, p->version};
    }
    if (p->rest[0] == "infer") {
      return Route{Endpoint::kInfer, at + "/infer", true, p->model, p->version};
    }
    return std::nullopt;
  }
  if (auto p = modelPath(path, "/v1/models/")) {
    const std::string at =
        p->version.empty() ? "/v1/models/{name}" : "/v1/models/{name}/versions/{version}";
    if (p->rest.size() == 1 && p->rest[0] == "metadata") {
      return Route{Endpoint::kTfModelMetadata, at + "/metadata", false, p->model, p->version};
    }
    if (!p->rest.empty()) return std::nullopt;
    // The method ends the path's last part: /v1/models/m:predict, .../versions/1:predict.
    std::string& last = p->version.empty() ? p->model : p->version;
    const std::string predict = ":predict";
    if (endsWith(last, predict) && last.size() > predict.size()) {
      last.resize(last.size() - predict.size());
      return Route{Endpoint::kTfPredict, at + predict, true, p->model, p->version};
    }
    if (last.find(':') != std::string::npos) return std::nullopt;  // :classify, :regress
    return Route{Endpoint::kTfModelStatus, at, false, p->model, p->version};
  }
  return std::nullopt;
}

std::string stringify(const Poco::JSON::Object& object) {
  std::ostringstream text;
  object.stringify(text);
  return text.str();
}

// /model: the model's layers, where it came from and what it learnt.
std::string modelInfoJson(const Predictor& model, const std::string& name) {
  Poco::JSON::Object out(Poco::JSON_PRESERVE_KEY_ORDER);
  out.set("name", name);
  Poco::JSON::Array layers;
  for (int size : model.layout().sizes()) layers.add(size);
  out.set("layers", layers);
  out.set("source", model.source());
  const auto& dataSet = model.dataSet();
  out.set("data_set", dataSet.name);
  out.set("pictures", dataSet.pictures == data::PictureKind::kDigit ? "digit" : "image");
  Poco::JSON::Array classes;
  for (const auto& label : dataSet.classes) classes.add(label);
  out.set("classes", classes);
  Poco::JSON::Array range;  // of the pixel values every route takes
  range.add(kPixelMin);
  range.add(kPixelMax);
  out.set("input_range", range);
  return stringify(out);
}

// Whether /predict's query asks for the inputs: "inputs=true"; nothing else is taken.
bool inputsAsked(const std::string& query) {
  const std::string usage =
      "/predict takes one query parameter, inputs=true: the answer then holds the 28x28 inputs "
      "the model saw";
  if (query.empty()) return false;
  Poco::URI uri;
  Poco::URI::QueryParameters parameters;
  try {
    uri.setRawQuery(query);
    parameters = uri.getQueryParameters();
  } catch (const Poco::SyntaxException&) {
    throw RequestError(400, usage);
  }
  for (const auto& [key, value] : parameters) {
    if (key != "inputs" || (value != "true" && value != "false")) throw RequestError(400, usage);
  }
  return !parameters.empty() && parameters.back().second == "true";
}

// The prediction's JSON with "inputs": [[784 values 0-255], ...], each image as the model saw it.
std::string withInputs(const std::string& prediction, const arma::fmat& inputs) {
  std::string out = prediction.substr(0, prediction.size() - 1) + ",\"inputs\":[";
  for (arma::uword image = 0; image < inputs.n_cols; ++image) {
    out += image ? ",[" : "[";
    for (arma::uword k = 0; k < inputs.n_rows; ++k) {
      out += (k ? "," : "") + std::to_string(std::lround(inputs(k, image) * 255));
    }
    out += "]";
  }
  return out + "]}";
}

// The model and version a path names, where it names them: this server's, or a 404.
void checkTarget(const Route& route, const std::string& modelName) {
  if (!route.model.empty() && route.model != modelName) {
    throw RequestError(
        404, "model \"" + route.model + "\" is not served here; \"" + modelName + "\" is");
  }
  if (!route.version.empty() && route.version != kModelVersion) {
    throw RequestError(404, "version \"" + route.version + "\" of model \"" + modelName +
                                "\" is not served here; version \"" + kModelVersion + "\" is");
  }
}

// A body of `contentType` on `route`: a multipart upload is refused on every route (415), any
// type but JSON on the routes that take only JSON.
void checkBodyType(const Route& route, const std::string& contentType) {
  const BodyType type = declaredBody(contentType);
  const bool json = type == BodyType::kJson || type == BodyType::kUndeclared;
  if (route.endpoint != Endpoint::kPredict && !json) {
    throw RequestError(415, mediaType(contentType) + " is not read here: POST " + route.pattern +
                                " takes JSON");
  }
}

// The body of a POST to a route that takes only JSON, read; a picture sent undeclared is
// refused as it would be declared.
std::string jsonBody(const Route& route, const std::string& contentType,
                     const std::function<std::string()>& readBody) {
  std::string body = readBody();
  checkBodyType(route, contentTypeOf(contentType, body));
  return body;
}

// A 405 naming the method `route` takes.
HttpReply wrongMethod(const Route& route) {
  return methodNotAllowed(
      route.post ? "POST" : "GET, HEAD",
      std::string(route.post ? "POST" : "GET") + " " + route.pattern +
          (route.endpoint == Endpoint::kPredict
               ? ": JSON {\"images\": [[784 values 0-255], ...]} or a PNG image"
               : ""));
}

}  // namespace

std::shared_ptr<Predictor> InferenceRoutes::predictor() const {
  std::string reason;
  auto predictor = model_->get(&reason);
  if (!predictor) throw RequestError(503, reason);
  return predictor;
}

std::optional<HttpReply> InferenceRoutes::answer(const std::string& method, const std::string& path,
                                                 const std::string& query,
                                                 const std::string& contentType,
                                                 const std::function<std::string()>& readBody) {
  auto found = match(path);
  if (!found) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  HttpReply reply;
  try {
    reply = route(*found, method, query, contentType, readBody);
  } catch (const RequestError& e) {
    reply = errorReply(e.status(), e.what());
  }
  metrics_.record(found->pattern, reply.status,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

HttpReply InferenceRoutes::route(const Route& route, const std::string& method,
                                 const std::string& query, const std::string& contentType,
                                 const std::function<std::string()>& readBody) const {
  if (route.post ? method != "POST" : method != "GET" && method != "HEAD") {
    return wrongMethod(route);
  }
  if (!model_) throw RequestError(404, "no model here: worker 0 and pstrain serve predict");
  checkTarget(route, modelName_);
  // Refused from its headers, before the body is read: a form upload on every route, and
  // anything declared other than JSON on the routes that take only JSON; a picture sent there
  // undeclared is refused the same way once read.
  if (route.post) checkBodyType(route, contentType);
  std::string reason;
  const auto current = model_->get(&reason);
  const bool loaded = current != nullptr;
  switch (route.endpoint) {
    case Endpoint::kPredict: {
      // The request is checked first, so a client learns what is wrong with it even while the
      // model is still training; a PNG is checked as an image until the model says otherwise.
      const bool showInputs = inputsAsked(query);
      auto inputs =
          parsePredictBody(readBody(), contentType,
                           current ? current->dataSet().pictures : data::PictureKind::kImage);
      auto model = predictor();
      auto answer = Prediction(model->probabilities(inputs), model->dataSet().classes).columns();
      return jsonReply(200, showInputs ? withInputs(answer, inputs) : answer);
    }
    case Endpoint::kModel:
      return jsonReply(200, modelInfoJson(*predictor(), modelName_));
    case Endpoint::kServerMetadata:
      return jsonReply(200, serverMetadataJson());
    case Endpoint::kServerLive:
      return {200, "text/plain", ""};
    case Endpoint::kServerReady:
    case Endpoint::kModelReady:
      // The Open Inference Protocol says "not ready" with a 4xx.
      if (!loaded) throw RequestError(400, reason);
      return {200, "text/plain", ""};
    case Endpoint::kModelMetadata:
      return jsonReply(200, modelMetadataJson(modelName_));
    case Endpoint::kInfer: {
      auto request = parseInferRequest(jsonBody(route, contentType, readBody));
      auto model = predictor();
      Prediction prediction(model->probabilities(request.inputs), model->dataSet().classes);
      return jsonReply(200, inferResponseJson(modelName_, route.version, request, prediction));
    }
    case Endpoint::kTfModelStatus:
      return jsonReply(200, tfModelStatusJson(loaded));
    case Endpoint::kTfModelMetadata:
      return jsonReply(200, tfModelMetadataJson(modelName_));
    case Endpoint::kTfPredict: {
      auto request = parseTfPredictRequest(jsonBody(route, contentType, readBody));
      auto model = predictor();
      Prediction prediction(model->probabilities(request.inputs), model->dataSet().classes);
      return jsonReply(200, tfPredictResponseJson(request, prediction));
    }
  }
  throw RequestError(404, "not found");
}

}  // namespace pstrain::serve
