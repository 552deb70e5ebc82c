#include "pstrain/serve/tf_serving.hpp"

#include "pstrain/model/layout.hpp"
#include "pstrain/serve/http_reply.hpp"
#include "pstrain/serve/image_inputs.hpp"
#include "pstrain/serve/json_value.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

// The one signature, as TF Serving names a model's default.
const std::string kSignature = "serving_default";

const std::string kTfShape =
    "{\"instances\": [[784 values 0-255], ...]} or {\"inputs\": {\"images\": [...]}}";

// A list of images: each 784 values, or an object naming the one input, {"images": [...]}.
arma::fmat imagesOf(const JsonValue& list, const std::string& key) {
  if (!list.isArray() || list.size() == 0) {
    throw RequestError(400, "\"" + key + "\" must be a non-empty list of images: " + kTfShape);
  }
  if (!list.numbers().empty()) {
    throw RequestError(400, "\"" + key + "\" holds numbers, not images: " + kTfShape);
  }
  ImageInputs inputs;
  for (const auto& item : list.items()) {
    const JsonValue* named = item.isObject() ? item.find("images") : nullptr;
    if (item.isObject() && !named) {
      throw RequestError(400, "an instance without \"images\": this model has one input, images");
    }
    inputs.addImage(named ? *named : item);
  }
  return inputs.matrix();
}

// A TensorInfo: its name, dtype and dimensions (-1: any number of images).
std::string tensorInfo(const std::string& name, const std::string& dtype,
                       const std::vector<int>& dims) {
  std::string dim;
  for (int size : dims) {
    dim += std::string(dim.empty() ? "" : ",") + "{\"size\":\"" + std::to_string(size) +
           "\",\"name\":\"\"}";
  }
  return jsonString(name) + ":{\"dtype\":\"" + dtype + "\",\"tensor_shape\":{\"dim\":[" + dim +
         "],\"unknown_rank\":false},\"name\":" + jsonString(name) + "}";
}

}  // namespace

TfPredictRequest parseTfPredictRequest(const std::string& body) {
  const JsonValue request = parseJson(body);
  // TF Serving refuses a signature its model lacks rather than answer from another one.
  if (const JsonValue* signature = request.isObject() ? request.find("signature_name") : nullptr) {
    const bool known = signature->type() == JsonValue::Type::kString &&
                       (signature->asString().empty() || signature->asString() == kSignature);
    if (!known) {
      throw RequestError(400, "signature " + signature->describe() +
                                  " is not served: this model has one, \"" + kSignature + "\"");
    }
  }
  const JsonValue* instances = request.isObject() ? request.find("instances") : nullptr;
  const JsonValue* inputs = request.isObject() ? request.find("inputs") : nullptr;
  if (bool(instances) == bool(inputs)) {
    throw RequestError(400, "expected one of \"instances\" and \"inputs\": " + kTfShape);
  }
  if (instances) return {imagesOf(*instances, "instances"), false};
  if (inputs->isObject()) {
    const JsonValue* images = inputs->find("images");
    if (!images) throw RequestError(400, "\"inputs\" names no \"images\": " + kTfShape);
    return {imagesOf(*images, "images"), true};
  }
  return {imagesOf(*inputs, "inputs"), true};
}

std::string tfPredictResponseJson(const TfPredictRequest& request, const Prediction& prediction) {
  if (request.columnar) return "{\"outputs\":" + prediction.columns() + "}";
  std::string rows;
  for (size_t image = 0; image < prediction.imageCount(); ++image) {
    rows += (image ? "," : "") + prediction.row(image);
  }
  return "{\"predictions\":[" + rows + "]}";
}

std::string tfModelStatusJson(bool loaded) {
  return "{\"model_version_status\":[{\"version\":" + jsonString(kModelVersion) +
         ",\"state\":\"" + (loaded ? "AVAILABLE" : "START") +
         "\",\"status\":{\"error_code\":\"OK\",\"error_message\":\"\"}}]}";
}


std::string tfModelMetadataJson(const std::string& modelName) {
  std::string outputs;
  for (const auto& tensor : kOutputTensors) {
    const bool perClass = std::string(tensor.name) == "probabilities";
    outputs += (outputs.empty() ? "" : ",") +
               tensorInfo(tensor.name, tensor.tfDtype,
                          perClass ? std::vector<int>{-1, model::kMnistClasses}
                                   : std::vector<int>{-1});
  }
  return "{\"model_spec\":{\"name\":" + jsonString(modelName) +
         ",\"signature_name\":\"\",\"version\":" + jsonString(kModelVersion) +
         "},\"metadata\":{\"signature_def\":{\"signature_def\":{\"" + kSignature +
         "\":{\"inputs\":{" + tensorInfo("images", "DT_FLOAT", {-1, model::kMnistInputs}) +
         "},\"outputs\":{" + outputs + "},\"method_name\":\"tensorflow/serving/predict\"}}}}}";
}

}  // namespace pstrain::serve
