#include "pstrain/model/onnx_export.hpp"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <vector>

#include "pstrain/common/error.hpp"

namespace pstrain::model {
namespace {

// What /predict divides each pixel value by (serve::ImageInputs): float32 division by 255 gives
// the same bits for every integer 0-255 as its division in double rounded to float.
constexpr float kPixelMax = 255.0f;

std::string layerName(size_t layer) { return "layer" + std::to_string(layer); }

onnx::TensorProto* addInitializer(onnx::GraphProto& graph, const std::string& name,
                                  const std::vector<std::int64_t>& dims,
                                  const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (auto dim : dims) tensor->add_dims(dim);
  tensor->mutable_float_data()->Add(values.begin(), values.end());
  return tensor;
}

onnx::NodeProto* addNode(onnx::GraphProto& graph, const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const auto& input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

void setInt(onnx::NodeProto* node, const std::string& name, std::int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

// A graph input or output of `elemType` whose first dimension is the batch, "N".
void describeTensor(onnx::ValueInfoProto* info, const std::string& name, int elemType,
                    const std::vector<std::int64_t>& dimsAfterBatch) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elemType);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  shape->add_dim()->set_dim_param("N");
  for (auto dim : dimsAfterBatch) shape->add_dim()->set_dim_value(dim);
}

// Layer `layer` as Gemm(x, W, b) with transB = 1, W [out, in] as PyTorch's exporter writes an
// nn.Linear: Layout keeps W column-major (out x in), so it is transposed into ONNX's row-major
// order. Returns the name of the layer's output.
std::string addLayer(onnx::GraphProto& graph, const Model& model, size_t layer,
                     const std::string& input) {
  const auto& layout = model.layout;
  const auto in = size_t(layout.sizes()[layer]);
  const auto out = size_t(layout.sizes()[layer + 1]);
  const float* weights = model.params.data() + layout.weightOffset(layer);
  std::vector<float> rowMajor(out * in);
  for (size_t o = 0; o < out; ++o) {
    for (size_t i = 0; i < in; ++i) rowMajor[o * in + i] = weights[o + i * out];
  }
  const float* bias = model.params.data() + layout.biasOffset(layer);
  const std::string name = layerName(layer);
  addInitializer(graph, name + ".weight", {std::int64_t(out), std::int64_t(in)}, rowMajor);
  addInitializer(graph, name + ".bias", {std::int64_t(out)}, std::vector<float>(bias, bias + out));
  const bool last = layer + 1 == layout.layerCount();
  const std::string gemmOut = last ? "logits" : name + ".linear";
  setInt(addNode(graph, "Gemm", name + ".gemm", {input, name + ".weight", name + ".bias"}, gemmOut),
         "transB", 1);
  if (last) return gemmOut;
  addNode(graph, "Relu", name + ".relu", {gemmOut}, name + ".relu");
  return name + ".relu";
}

void buildGraph(onnx::GraphProto& graph, const Model& model) {
  graph.set_name("pstrain_mlp");
  graph.set_doc_string(
      "An MLP trained by pstrain on " + model.dataSet.name +
      ": pixels are 28x28 images row by row, values 0-255 (0 background), as POST /predict takes "
      "them; probabilities are the softmax of the logits, predictions the most probable class.");
  describeTensor(graph.add_input(), kOnnxInput, onnx::TensorProto::FLOAT, {kMnistInputs});
  describeTensor(graph.add_output(), kOnnxProbabilities, onnx::TensorProto::FLOAT, {kMnistClasses});
  describeTensor(graph.add_output(), kOnnxPredictions, onnx::TensorProto::INT64, {});
  addInitializer(graph, "pixel_max", {}, {kPixelMax});
  std::string x = addNode(graph, "Div", "scale", {kOnnxInput, "pixel_max"}, "inputs")->output(0);
  for (size_t layer = 0; layer < model.layout.layerCount(); ++layer) {
    x = addLayer(graph, model, layer, x);
  }
  setInt(addNode(graph, "Softmax", "softmax", {x}, kOnnxProbabilities), "axis", 1);
  onnx::NodeProto* argMax =
      addNode(graph, "ArgMax", "argmax", {kOnnxProbabilities}, kOnnxPredictions);
  setInt(argMax, "axis", 1);
  setInt(argMax, "keepdims", 0);
}

void addMetadata(onnx::ModelProto& proto, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* entry = proto.add_metadata_props();
  entry->set_key(key);
  entry->set_value(value);
}

}  // namespace

std::string onnxModel(const Model& model) {
  onnx::ModelProto proto;
  proto.set_ir_version(kOnnxIrVersion);
  onnx::OperatorSetIdProto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  proto.set_producer_name("pstrain");
  proto.set_producer_version(PSTRAIN_VERSION);
  buildGraph(*proto.mutable_graph(), model);
  // The data set and its class names, by label one a line (as a classes.txt beside the data).
  std::string classes;
  for (const auto& name : model.dataSet.classes) classes += name + "\n";
  addMetadata(proto, "data_set", model.dataSet.name);
  addMetadata(proto, "classes", classes);
  addMetadata(proto, "input_range", "[0, 255]");
  try {
    onnx::checker::check_model(proto);
  } catch (const std::exception& e) {
    throw Error(std::string("the ONNX graph fails ONNX's checker: ") + e.what());
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw Error("the ONNX graph could not be serialised");
  return bytes;
}

}  // namespace pstrain::model
