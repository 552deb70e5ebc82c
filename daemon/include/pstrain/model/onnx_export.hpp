#pragma once

#include <cstdint>
#include <string>

#include "pstrain/model/model_file.hpp"

namespace pstrain::model {

// The ONNX graph's interface, as docs/operations.md ("The model as ONNX") states it.
inline const std::string kOnnxInput = "pixels";                 // float32 [N, 784], 0-255
inline const std::string kOnnxProbabilities = "probabilities";  // float32 [N, 10]
inline const std::string kOnnxPredictions = "predictions";      // int64 [N]
// Opset 13 (ONNX 1.8): the first with Softmax over one axis, as every runtime since 2020 reads;
// IR version 7 is the one that release wrote.
constexpr std::int64_t kOnnxOpset = 13;
constexpr std::int64_t kOnnxIrVersion = 7;

// The trained model as a serialised ONNX ModelProto that computes what POST /predict answers:
// raw pixels 0-255 divided by 255 (as serve::ImageInputs scales them), each layer a Gemm with
// ReLU after all but the last, Softmax, and ArgMax of the probabilities. The graph passes ONNX's
// own checker before it is returned; a refusal is a bug here and throws Error.
std::string onnxModel(const Model& model);

}  // namespace pstrain::model
