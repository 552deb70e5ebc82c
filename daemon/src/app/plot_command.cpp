#include "pstrain/app/commands.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/plot/training_curve.hpp"

namespace pstrain::app {

int runPlot(const std::vector<std::string>& args) {
  std::string output = "curve.svg";
  std::vector<std::string> logs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--output") {
      if (i + 1 == args.size()) throw ConfigError(args[i] + " needs a file name");
      output = args[++i];
    } else {
      logs.push_back(args[i]);
    }
  }
  if (logs.empty()) throw ConfigError("usage: pstrain plot DEPLOY_LOG... [-o curve.svg]");
  auto curve = plot::readTrainingCurve(logs);
  if (curve.loss.empty() && curve.accuracy.empty()) {
    throw DataError("no training lines (ps global steps or accuracy) in the given logs");
  }
  writeFileAtomically(output, plot::renderSvg(curve));
  log::initConsole();
  log::logger("plot")->info("{}: {} loss and {} accuracy points", output, curve.loss.size(),
                            curve.accuracy.size());
  return 0;
}

}  // namespace pstrain::app
