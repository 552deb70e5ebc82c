#include "pstrain/serve/tf_serving.hpp"

#include "pstrain/serve/image_inputs.hpp"
#include "pstrain/serve/json_value.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

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

}  // namespace

TfPredictRequest parseTfPredictRequest(const std::string& body) {
  const JsonValue request = parseJson(body);
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
  return std::string("{\"model_version_status\":[{\"version\":\"1\",\"state\":\"") +
         (loaded ? "AVAILABLE" : "START") +
         "\",\"status\":{\"error_code\":\"OK\",\"error_message\":\"\"}}]}";
}

}  // namespace pstrain::serve
