#include "pstrain/app/commands.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/plot/training_curve.hpp"

#include <filesystem>

namespace pstrain::app {
namespace {

// The events file an argument names: a log dir or a deploy.log stands for the events.jsonl
// in that dir; anything else is an events file itself.
std::string eventsFile(const std::string& arg) {
  const std::filesystem::path path(arg);
  if (std::filesystem::is_directory(path)) return (path / observe::kEventsFile).string();
  if (path.filename() == "deploy.log") return (path.parent_path() / observe::kEventsFile).string();
  return arg;
}

}  // namespace

int runPlot(const std::vector<std::string>& args) {
  std::string output = "curve.svg";
  std::vector<std::string> logs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--output") {
      if (i + 1 == args.size()) throw ConfigError(args[i] + " needs a file name");
      output = args[++i];
    } else {
      logs.push_back(eventsFile(args[i]));
    }
  }
  if (logs.empty()) throw ConfigError("usage: pstrain plot LOG_DIR|EVENTS_FILE... [-o curve.svg]");
  auto curve = plot::readTrainingCurve(logs);
  if (curve.loss.empty() && curve.accuracy.empty()) {
    throw DataError("no training events (ps global steps or accuracy) in the given files");
  }
  writeFileAtomically(output, plot::renderSvg(curve));
  log::initConsole();
  log::logger("plot")->info("{}: {} loss and {} accuracy points", output, curve.loss.size(),
                            curve.accuracy.size());
  return 0;
}

}  // namespace pstrain::app
