#pragma once

#include <armadillo>
#include <string>

#include "pstrain/serve/prediction.hpp"

namespace pstrain::serve {

// TensorFlow Serving's REST predict API, for this server's one model: its one input, "images",
// is an image of 784 pixel values 0-255 (flat or as 28 rows).

// A predict request's images, and how they were given.
struct TfPredictRequest {
  arma::fmat inputs;      // 784 rows, a column per image
  bool columnar = false;  // "inputs" (answered as "outputs") rather than "instances"
};

// Reads {"instances": [image, ...]} (each image may also be {"images": image}) or
// {"inputs": [image, ...]} / {"inputs": {"images": [image, ...]}}; throws RequestError 400,
// also for a "signature_name" other than "serving_default" (or "", which means it).
TfPredictRequest parseTfPredictRequest(const std::string& body);

// {"predictions": [{"predictions": 3, "labels": "Dress", "probabilities": [...]}, ...]} for
// instances, {"outputs": {"predictions": [...], ...}} for inputs.
std::string tfPredictResponseJson(const TfPredictRequest& request, const Prediction& prediction);

// GetModelStatusResponse as JSON: version 1, AVAILABLE once the model is loaded, else START.
std::string tfModelStatusJson(bool loaded);

// GetModelMetadataResponse as JSON: the model spec and its one signature, serving_default.
std::string tfModelMetadataJson(const std::string& modelName);

}  // namespace pstrain::serve
