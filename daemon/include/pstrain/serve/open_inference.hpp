#pragma once

#include <armadillo>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/serve/prediction.hpp"

namespace pstrain::serve {

// The Open Inference Protocol (KServe v2) over HTTP/REST, for this server's one model: an input
// tensor "images" (FP32 or UINT8, pixel values 0-255, shape [N, 784], [N, 28, 28] or any [N, ...]
// whose dimensions after N multiply to 784) and the output tensors of kOutputTensors.

// An inference request's contents.
struct InferRequest {
  std::optional<std::string> id;     // echoed in the response
  arma::fmat inputs;                 // 784 rows, a column per image
  std::vector<std::string> outputs;  // the outputs asked for; empty: all
};

// Reads a $inference_request; throws RequestError 400 saying what is wrong.
InferRequest parseInferRequest(const std::string& body);

// The $inference_response to `request`; `version`: the one its path named, echoed as
// model_version (empty: none named, none echoed).
std::string inferResponseJson(const std::string& modelName, const std::string& version,
                              const InferRequest& request, const Prediction& prediction);

// $metadata_server_response and $metadata_model_response (its input's "parameters" give the
// range of the pixel values, min 0 and max 255, which FP32 alone does not say).
std::string serverMetadataJson();
std::string modelMetadataJson(const std::string& modelName);

}  // namespace pstrain::serve
