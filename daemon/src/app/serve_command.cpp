#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "pstrain/app/commands.hpp"
#include "pstrain/app/signals.hpp"
#include "pstrain/common/cpu_limit.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/model/model_file.hpp"
#include "pstrain/observe/http_endpoint.hpp"
#include "pstrain/serve/predictor.hpp"

namespace pstrain::app {
namespace {

constexpr int kDefaultHttpPort = 8080;  // the daemon's httpPort default
constexpr auto kModelPoll = std::chrono::milliseconds(500);

int parsePort(const std::string& value) {
  try {
    size_t end = 0;
    int port = std::stoi(value, &end);
    if (end == value.size() && port >= 0 && port <= 65535) return port;
  } catch (const std::exception&) {
  }
  throw ConfigError("--http-port takes a port from 0 to 65535, not '" + value + "'");
}

}  // namespace

int runServe(const std::vector<std::string>& args) {
  const std::string usage = "usage: pstrain serve --model FILE [--http-port N]";
  std::string modelPath;
  int port = kDefaultHttpPort;
  for (size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) throw ConfigError(args[i] + " needs a value; " + usage);
    if (args[i] == "--model") {
      modelPath = args[i + 1];
    } else if (args[i] == "--http-port") {
      port = parsePort(args[i + 1]);
    } else {
      throw ConfigError("unknown flag " + args[i] + "; " + usage);
    }
  }
  if (modelPath.empty()) throw ConfigError(usage);
  log::initConsole();
  handleTerminationSignals([](int signal) {
    log::logger("serve")->info("received {}, exiting", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    return kExitOk;
  });
  limitBlasThreads(cpuLimit());  // a pod's CPU limit, as the daemon does
  auto logger = log::logger("serve");
  serve::ModelSlot model("no model yet: waiting for " + modelPath);
  observe::HttpEndpoint http(port, nullptr, &model);
  logger->info("serving {} on http://0.0.0.0:{}/ (POST /predict); pid {}", modelPath, http.port(),
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
