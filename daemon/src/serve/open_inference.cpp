#include "pstrain/serve/open_inference.hpp"

#include <algorithm>
#include <cmath>

#include "pstrain/model/layout.hpp"
#include "pstrain/serve/http_reply.hpp"
#include "pstrain/serve/image_inputs.hpp"
#include "pstrain/serve/json_value.hpp"
#include "pstrain/serve/request_error.hpp"

namespace pstrain::serve {
namespace {

const std::string kInputName = "images";

[[noreturn]] void refuse(const std::string& message) { throw RequestError(400, message); }

// The dimensions of a tensor's "shape": whole numbers from 0 up.
std::vector<std::uint64_t> shapeOf(const JsonValue* shape) {
  if (!shape || !shape->isArray() || shape->size() != shape->numbers().size() ||
      shape->size() == 0) {
    refuse("input \"images\": \"shape\" must be a list of dimensions, e.g. [1, 784]");
  }
  std::vector<std::uint64_t> dims;
  for (double d : shape->numbers()) {
    if (!(d >= 0 && d <= 1e9 && d == std::floor(d))) {
      refuse("input \"images\": dimension " + JsonValue::number(d).describe() +
             " is not a whole number");
    }
    dims.push_back(std::uint64_t(d));
  }
  return dims;
}

std::string shapeText(const std::vector<std::uint64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

arma::fmat inputsOf(const JsonValue& input) {
  if (!input.isObject())
    refuse("each input must be an object {\"name\", \"shape\", \"datatype\", \"data\"}");
  const JsonValue* name = input.find("name");
  if (!name || name->type() != JsonValue::Type::kString || name->asString() != kInputName) {
    refuse("unknown input " + (name ? name->describe() : std::string("(no name)")) +
           ": this model has one input, \"images\"");
  }
  const JsonValue* datatype = input.find("datatype");
  const std::string type = datatype ? datatype->asString() : "";
  if (type != "FP32" && type != "UINT8") {
    refuse("input \"images\": datatype " + (datatype ? datatype->describe() : "(none)") +
           " is not supported: send FP32 or UINT8 pixel values 0-255");
  }
  const auto dims = shapeOf(input.find("shape"));
  std::uint64_t perImage = 1;
  for (size_t i = 1; i < dims.size(); ++i) perImage *= dims[i];
  if (dims.size() < 2 || perImage != std::uint64_t(model::kMnistInputs) || dims[0] == 0) {
    refuse("input \"images\": shape " + shapeText(dims) +
           " is not [N, 784] or [N, 28, 28] (N images of 28x28 pixels)");
  }
  const JsonValue* data = input.find("data");
  if (!data || !data->isArray())
    refuse("input \"images\": \"data\" must be an array of pixel values");
  ImageInputs pixels(type == "UINT8");
  pixels.addValues(*data);
  if (pixels.valueCount() != dims[0] * perImage) {
    refuse("input \"images\": shape " + shapeText(dims) + " holds " +
           std::to_string(dims[0] * perImage) + " values; \"data\" has " +
           std::to_string(pixels.valueCount()));
  }
  return pixels.matrix();
}

std::vector<std::string> requestedOutputs(const JsonValue* outputs) {
  std::vector<std::string> names;
  if (!outputs) return names;
  if (!outputs->isArray() || !outputs->numbers().empty()) {
    refuse("\"outputs\" must be a list of {\"name\": ...}");
  }
  for (const auto& output : outputs->items()) {
    const JsonValue* name = output.isObject() ? output.find("name") : nullptr;
    const bool known =
        name && std::any_of(kOutputTensors.begin(), kOutputTensors.end(),
                            [&](const OutputTensor& t) { return name->asString() == t.name; });
    if (!known) {
      refuse("unknown output " + (name ? name->describe() : output.describe()) +
             ": this model answers \"predictions\", \"labels\" and \"probabilities\"");
    }
    names.push_back(name->asString());
  }
  return names;
}

// A $metadata_tensor; `parameters`: a JSON object of more about it, or empty.
std::string tensorMetadata(const std::string& name, const std::string& datatype,
                           const std::string& shape, const std::string& parameters = "") {
  return "{\"name\":" + jsonString(name) + ",\"datatype\":\"" + datatype + "\",\"shape\":" + shape +
         (parameters.empty() ? "" : ",\"parameters\":" + parameters) + "}";
}

std::string outputShape(const std::string& name, const std::string& images) {
  return name == "probabilities" ? "[" + images + "," + std::to_string(model::kMnistClasses) + "]"
                                 : "[" + images + "]";
}

}  // namespace

InferRequest parseInferRequest(const std::string& body) {
  const JsonValue request = parseJson(body);
  if (!request.isObject()) refuse("expected an inference request {\"inputs\": [...]}");
  InferRequest parsed;
  if (const JsonValue* id = request.find("id")) {
    if (id->type() != JsonValue::Type::kString) refuse("\"id\" must be a string");
    parsed.id = id->asString();
  }
  const JsonValue* inputs = request.find("inputs");
  if (!inputs || !inputs->isArray() || inputs->size() != 1 || !inputs->numbers().empty()) {
    refuse("\"inputs\" must hold one input tensor, \"images\"");
  }
  parsed.inputs = inputsOf(inputs->items().front());
  parsed.outputs = requestedOutputs(request.find("outputs"));
  return parsed;
}

std::string inferResponseJson(const std::string& modelName, const std::string& version,
                              const InferRequest& request, const Prediction& prediction) {
  std::string out = "{\"model_name\":" + jsonString(modelName);
  if (!version.empty()) out += ",\"model_version\":" + jsonString(version);
  if (request.id) out += ",\"id\":" + jsonString(*request.id);
  out += ",\"outputs\":[";
  const std::string images = std::to_string(prediction.imageCount());
  bool first = true;
  for (const auto& tensor : kOutputTensors) {
    const auto& wanted = request.outputs;
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), tensor.name) == wanted.end()) {
      continue;
    }
    out += std::string(first ? "" : ",") + "{\"name\":\"" + tensor.name + "\",\"datatype\":\"" +
           tensor.datatype + "\",\"shape\":" + outputShape(tensor.name, images) +
           ",\"data\":" + prediction.column(tensor.name, true) + "}";
    first = false;
  }
  return out + "]}";
}

std::string serverMetadataJson() {
  return "{\"name\":\"pstrain\",\"version\":\"" PSTRAIN_VERSION "\",\"extensions\":[]}";
}

std::string modelMetadataJson(const std::string& modelName) {
  std::string outputs;
  for (const auto& tensor : kOutputTensors) {
    outputs += (outputs.empty() ? "" : ",") +
               tensorMetadata(tensor.name, tensor.datatype, outputShape(tensor.name, "-1"));
  }
  const std::string range = "{\"min\":" + std::to_string(kPixelMin) +
                            ",\"max\":" + std::to_string(kPixelMax) + "}";
  return "{\"name\":" + jsonString(modelName) + ",\"versions\":[" + jsonString(kModelVersion) +
         "],\"platform\":\"pstrain\",\"inputs\":[" +
         tensorMetadata(kInputName, "FP32", "[-1," + std::to_string(model::kMnistInputs) + "]",
                        range) +
         "],\"outputs\":[" + outputs + "]}";
}

}  // namespace pstrain::serve
