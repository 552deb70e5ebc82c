#define BOOST_TEST_MODULE onnx_export
#include <boost/test/unit_test.hpp>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "pstrain/data/data_set.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/model/onnx_export.hpp"
#include "pstrain/serve/image_inputs.hpp"

// The ONNX graph of a model, read back with ONNX's own classes: its interface, its tensors, and
// what it computes, by the ONNX operators' definitions, against what /predict computes.

using namespace pstrain::model;

namespace {

Model testModel(const std::vector<int>& hidden) {
  auto layout = Layout::mnist(hidden);
  auto params = initialParameters(layout, 5);
  // Biases of their own, so that a bias in the wrong place shows.
  for (size_t layer = 0; layer < layout.layerCount(); ++layer) {
    for (int k = 0; k < layout.sizes()[layer + 1]; ++k) {
      params[layout.biasOffset(layer) + size_t(k)] = 0.05f * float(k % 5) - 0.1f;
    }
  }
  pstrain::data::DataSetInfo dataSet{"Fashion-MNIST", {}, pstrain::data::PictureKind::kImage};
  for (int k = 0; k < kMnistClasses; ++k) dataSet.classes.push_back("class " + std::to_string(k));
  return Model{layout, params, dataSet};
}

onnx::ModelProto exported(const Model& model) {
  onnx::ModelProto proto;
  BOOST_REQUIRE(proto.ParseFromString(onnxModel(model)));
  return proto;
}

std::vector<std::int64_t> dimsOf(const onnx::ValueInfoProto& info) {
  std::vector<std::int64_t> dims;
  for (const auto& dim : info.type().tensor_type().shape().dim()) {
    dims.push_back(dim.has_dim_param() ? -1 : dim.dim_value());
  }
  return dims;
}

std::int64_t intAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return attribute.i();
  }
  BOOST_FAIL(node.op_type() + " has no attribute " + name);
  return 0;
}

struct Tensor {
  std::vector<std::int64_t> dims;
  std::vector<double> values;  // row-major
};

// The graph run by the ONNX operators' definitions, for the operators it uses, in double.
std::map<std::string, Tensor> evaluate(const onnx::ModelProto& proto, Tensor pixels) {
  std::map<std::string, Tensor> tensors{{kOnnxInput, std::move(pixels)}};
  for (const auto& init : proto.graph().initializer()) {
    tensors[init.name()] = {{init.dims().begin(), init.dims().end()},
                            {init.float_data().begin(), init.float_data().end()}};
  }
  for (const auto& node : proto.graph().node()) {
    const Tensor& a = tensors.at(node.input(0));
    const auto rows = size_t(a.dims[0]);
    const size_t cols = a.values.size() / rows;
    Tensor y{a.dims, a.values};
    if (node.op_type() == "Div") {
      for (auto& v : y.values) v /= tensors.at(node.input(1)).values.at(0);
    } else if (node.op_type() == "Relu") {
      for (auto& v : y.values) v = std::max(v, 0.0);
    } else if (node.op_type() == "Gemm") {  // A [N, K] x B^T, B [M, K], + C [M]
      BOOST_REQUIRE(intAttribute(node, "transB") == 1);
      const Tensor& b = tensors.at(node.input(1));
      const Tensor& c = tensors.at(node.input(2));
      const auto m = size_t(b.dims[0]);
      y = {{a.dims[0], b.dims[0]}, std::vector<double>(rows * m)};
      for (size_t n = 0; n < rows; ++n) {
        for (size_t j = 0; j < m; ++j) {
          double sum = c.values[j];
          for (size_t k = 0; k < cols; ++k) sum += a.values[n * cols + k] * b.values[j * cols + k];
          y.values[n * m + j] = sum;
        }
      }
    } else if (node.op_type() == "Softmax") {
      BOOST_REQUIRE(intAttribute(node, "axis") == 1);
      for (size_t n = 0; n < rows; ++n) {
        auto row = y.values.begin() + long(n * cols);
        const double top = *std::max_element(row, row + long(cols));
        double sum = 0;
        for (size_t k = 0; k < cols; ++k) sum += row[long(k)] = std::exp(row[long(k)] - top);
        for (size_t k = 0; k < cols; ++k) row[long(k)] /= sum;
      }
    } else if (node.op_type() == "ArgMax") {
      BOOST_REQUIRE(intAttribute(node, "axis") == 1 && intAttribute(node, "keepdims") == 0);
      y = {{a.dims[0]}, {}};
      for (size_t n = 0; n < rows; ++n) {
        auto row = a.values.begin() + long(n * cols);
        y.values.push_back(double(std::max_element(row, row + long(cols)) - row));
      }
    } else {
      BOOST_FAIL("an operator the exporter does not write: " + node.op_type());
    }
    tensors[node.output(0)] = std::move(y);
  }
  return tensors;
}

}  // namespace

BOOST_AUTO_TEST_CASE(graph_takes_pixels_and_answers_probabilities_and_predictions) {
  const auto proto = exported(testModel({16, 8}));
  BOOST_TEST(proto.ir_version() == 7);
  BOOST_REQUIRE(proto.opset_import_size() == 1);
  BOOST_TEST(proto.opset_import(0).domain() == "");
  BOOST_TEST(proto.opset_import(0).version() == 13);
  BOOST_TEST(proto.producer_name() == "pstrain");
  const auto& graph = proto.graph();
  BOOST_REQUIRE(graph.input_size() == 1);
  BOOST_TEST(graph.input(0).name() == "pixels");
  BOOST_TEST(graph.input(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
  BOOST_TEST(dimsOf(graph.input(0)) == (std::vector<std::int64_t>{-1, 784}));
  BOOST_REQUIRE(graph.output_size() == 2);
  BOOST_TEST(graph.output(0).name() == "probabilities");
  BOOST_TEST(graph.output(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
  BOOST_TEST(dimsOf(graph.output(0)) == (std::vector<std::int64_t>{-1, 10}));
  BOOST_TEST(graph.output(1).name() == "predictions");
  BOOST_TEST(graph.output(1).type().tensor_type().elem_type() == onnx::TensorProto::INT64);
  BOOST_TEST(dimsOf(graph.output(1)) == (std::vector<std::int64_t>{-1}));
  std::vector<std::string> ops;
  for (const auto& node : graph.node()) ops.push_back(node.op_type());
  BOOST_TEST(ops == (std::vector<std::string>{"Div", "Gemm", "Relu", "Gemm", "Relu", "Gemm",
                                              "Softmax", "ArgMax"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_model_without_hidden_layers_is_one_gemm) {
  const auto proto = exported(testModel({}));
  std::vector<std::string> ops;
  for (const auto& node : proto.graph().node()) ops.push_back(node.op_type());
  BOOST_TEST(ops == (std::vector<std::string>{"Div", "Gemm", "Softmax", "ArgMax"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(weights_are_the_layouts_transposed_and_biases_as_they_are) {
  const auto model = testModel({16});
  const auto proto = exported(model);
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& init : proto.graph().initializer()) inits[init.name()] = &init;
  BOOST_TEST(inits.at("pixel_max")->float_data(0) == 255.0f);
  BOOST_TEST(inits.at("pixel_max")->dims_size() == 0);  // a scalar
  const auto& layout = model.layout;
  for (size_t layer = 0; layer < layout.layerCount(); ++layer) {
    const auto in = size_t(layout.sizes()[layer]);
    const auto out = size_t(layout.sizes()[layer + 1]);
    const auto& weight = *inits.at("layer" + std::to_string(layer) + ".weight");
    const auto& bias = *inits.at("layer" + std::to_string(layer) + ".bias");
    BOOST_TEST(weight.dims(0) == std::int64_t(out));
    BOOST_TEST(weight.dims(1) == std::int64_t(in));
    BOOST_REQUIRE(size_t(weight.float_data_size()) == out * in);
    size_t mismatched = 0;
    for (size_t o = 0; o < out; ++o) {
      for (size_t i = 0; i < in; ++i) {
        const float flat = model.params[layout.weightOffset(layer) + o + i * out];
        mismatched += weight.float_data(int(o * in + i)) != flat;
      }
    }
    BOOST_TEST(mismatched == 0u, "layer " << layer);
    for (size_t o = 0; o < out; ++o) {
      BOOST_TEST(bias.float_data(int(o)) == model.params[layout.biasOffset(layer) + o]);
    }
  }
}

BOOST_AUTO_TEST_CASE(passes_onnx_checker_and_shape_inference) {
  auto proto = exported(testModel({16, 8}));
  BOOST_CHECK_NO_THROW(onnx::checker::check_model(proto));
  onnx::shape_inference::InferShapes(proto);
  std::map<std::string, std::vector<std::int64_t>> inferred;
  for (const auto& info : proto.graph().value_info()) inferred[info.name()] = dimsOf(info);
  BOOST_TEST(inferred.at("logits") == (std::vector<std::int64_t>{-1, 10}));
  BOOST_TEST(inferred.at("layer0.relu") == (std::vector<std::int64_t>{-1, 16}));
}

BOOST_AUTO_TEST_CASE(metadata_names_the_data_set_and_its_classes) {
  const auto proto = exported(testModel({16}));
  std::map<std::string, std::string> metadata;
  for (const auto& entry : proto.metadata_props()) metadata[entry.key()] = entry.value();
  BOOST_TEST(metadata["data_set"] == "Fashion-MNIST");
  BOOST_TEST(metadata["classes"].rfind("class 0\nclass 1\n", 0) == 0u);
  BOOST_TEST(metadata["input_range"] == "[0, 255]");
}

// Raw 0-255 pixels in, as /predict takes them: the graph's answers are /predict's (ImageInputs'
// scaling, then the Mlp) up to float rounding.
BOOST_AUTO_TEST_CASE(graph_computes_what_predict_answers) {
  const auto model = testModel({16, 8});
  const auto proto = exported(model);
  constexpr size_t kImages = 20;
  std::mt19937 random(3);
  std::uniform_int_distribution<int> pixel(0, 255);
  Tensor pixels{{std::int64_t(kImages), kMnistInputs}, {}};
  pstrain::serve::ImageInputs inputs;
  for (size_t n = 0; n < kImages; ++n) {
    std::vector<float> image(kMnistInputs);
    for (auto& v : image) v = n == 0 ? 0.0f : n == 1 ? 255.0f : float(pixel(random));
    inputs.addImage(image);
    pixels.values.insert(pixels.values.end(), image.begin(), image.end());
  }
  Mlp mlp(model.layout);
  const arma::fmat expected = mlp.probabilities(model.params.data(), inputs.matrix());
  const auto answers = evaluate(proto, pixels);
  const auto& probabilities = answers.at("probabilities").values;
  const auto& predictions = answers.at("predictions").values;
  double worst = 0;
  for (size_t n = 0; n < kImages; ++n) {
    for (size_t k = 0; k < size_t(kMnistClasses); ++k) {
      worst = std::max(worst, std::abs(probabilities[n * 10 + k] - double(expected(k, n))));
    }
    BOOST_TEST(predictions[n] == double(expected.col(arma::uword(n)).index_max()), "image " << n);
  }
  BOOST_TEST(worst < 1e-6, "largest difference " << worst);
}
