#include <filesystem>

#include "pstrain/app/commands.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/model/onnx_export.hpp"

namespace pstrain::app {

int runExport(const std::vector<std::string>& args) {
  const std::string usage = "usage: pstrain export --onnx [--model model.bin] [-o model.onnx]";
  bool onnx = false;
  std::string modelPath = "model.bin";
  std::string output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--onnx") {
      onnx = true;
    } else if (args[i] == "--model" || args[i] == "-o" || args[i] == "--output") {
      if (i + 1 == args.size()) throw ConfigError(args[i] + " needs a file name; " + usage);
      std::string& value = args[i] == "--model" ? modelPath : output;
      value = args[++i];
    } else {
      throw ConfigError("unknown argument " + args[i] + "; " + usage);
    }
  }
  if (!onnx) throw ConfigError("name the format to export, --onnx; " + usage);
  // By default beside the model, as worker 0 writes it: model.bin -> model.onnx.
  if (output.empty()) {
    output = std::filesystem::path(modelPath).replace_extension(".onnx").string();
  }
  if (std::filesystem::weakly_canonical(output) == std::filesystem::weakly_canonical(modelPath)) {
    throw ConfigError(output + " is the model file itself: name another output with -o");
  }
  const auto trained = model::readModelFile(modelPath);
  writeFileAtomically(output, model::onnxModel(trained));
  log::initConsole();
  log::logger("export")->info(
      "{}: ONNX (opset {}, IR version {}) of {}: input {} float32 [N, 784] 0-255, outputs {} "
      "float32 [N, 10] and {} int64 [N]",
      output, model::kOnnxOpset, model::kOnnxIrVersion, modelPath, model::kOnnxInput,
      model::kOnnxProbabilities, model::kOnnxPredictions);
  return kExitOk;
}

}  // namespace pstrain::app
