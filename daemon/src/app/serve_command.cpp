#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "pstrain/app/commands.hpp"
#include "pstrain/app/http_endpoint.hpp"
#include "pstrain/app/signals.hpp"
#include "pstrain/common/cpu_limit.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/serve/predictor.hpp"

namespace pstrain::app {
namespace {

constexpr auto kModelPoll = std::chrono::milliseconds(500);

// The configuration keys a model server takes, as flags (or PSTRAIN_* variables).
const std::vector<std::string> kServeFlags{"--http-port", "--model-name", "--cors-origin"};

}  // namespace

int runServe(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: pstrain serve --model FILE [--http-port N] [--model-name NAME] [--cors-origin "
      "ORIGIN]";
  std::string modelPath;
  std::vector<std::string> settingArgs;
  for (size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) throw ConfigError(args[i] + " needs a value; " + usage);
    if (args[i] == "--model") {
      modelPath = args[i + 1];
    } else if (std::find(kServeFlags.begin(), kServeFlags.end(), args[i]) != kServeFlags.end()) {
      settingArgs.insert(settingArgs.end(), {args[i], args[i + 1]});
    } else {
      throw ConfigError("unknown flag " + args[i] + "; " + usage);
    }
  }
  if (modelPath.empty()) throw ConfigError(usage);
  const auto settings = config::load({settingArgs, config::processEnvironment()});
  log::initConsole();
  observe::Events events("serve", 0);  // for the lines of its events; kept in memory only
  const TerminationSignals signals([&events](int signal) {
    events.emit(observe::event::stopped(signal == SIGTERM ? "SIGTERM" : "SIGINT"));
    return kExitOk;
  });
  limitBlasThreads(cpuLimit());  // a pod's CPU limit, as the daemon does
  auto logger = log::logger("serve");
  serve::ModelSlot model("no model yet: waiting for " + modelPath);
  HttpEndpoint http(
      settings.httpPort, std::nullopt, &model,
      {settings.modelName, settings.corsOrigin, {{"role", "serve"}, {"ordinal", "0"}}});
  logger->info(
      "serving {} as model {} on http://0.0.0.0:{}/ (POST /predict, /v2/models/{}/infer, "
      "/v1/models/{}:predict); pid {}",
      modelPath, settings.modelName, http.port(), settings.modelName, settings.modelName,
      ::getpid());
  // The model may not exist yet (worker 0 writes it when training ends): wait for it, as 503s.
  if (!std::filesystem::exists(modelPath)) {
    logger->info("waiting for {} to appear", modelPath);
    log::flush();
    while (!std::filesystem::exists(modelPath)) std::this_thread::sleep_for(kModelPoll);
  }
  model.set(std::make_shared<serve::Predictor>(model::readModelFile(modelPath), modelPath));
  logger->info("model {} loaded", modelPath);
  log::flush();
  idleUntilTerminated();
}

}  // namespace pstrain::app
