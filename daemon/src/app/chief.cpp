#include "pstrain/app/chief.hpp"

#include <filesystem>

#include "pstrain/app/pod_api.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/model/onnx_export.hpp"

namespace pstrain::app {
namespace {

// Worker 0's journal of the ps that hold the run's state (ps::RecutCoordinator).
constexpr const char* kRecutJournalFile = "recut-journal.txt";

}  // namespace

Chief::Chief(const config::Config& settings, observe::Events& events, observe::Progress& progress,
             serve::ModelSlot& model)
    : settings_(settings), events_(events), progress_(progress), model_(model) {}

const data::Examples& Chief::loadTestSet(const data::MnistFiles& files) {
  test_ = data::loadTestSet(files);
  dataSet_ = data::describeDataSet(settings_.dataDir, *test_, model::kMnistClasses);
  progress_.setDataSet(dataSet_->name);
  return *test_;
}

std::unique_ptr<ps::RecutCoordinator> Chief::recutCoordinator(
    ps::ClientObserver& observer) const {
  return std::make_unique<ps::RecutCoordinator>(
      observer, settings_.checkpointDir + "/" + kRecutJournalFile,
      config::runFingerprint(settings_));
}

void Chief::serveWrittenModel() {
  const std::string path = settings_.logDir + "/model.bin";
  try {
    model_.set(std::make_shared<serve::Predictor>(model::readModelFile(path), path));
  } catch (const DataError& e) {
    log::logger("worker")->warn("Worker 0: no predictions: {}", e.what());
  }
}

void Chief::finish(const worker::Trainer& trainer, const worker::TrainingResult& result,
                   std::uint64_t runId, double elapsedSeconds) {
  model::Model trained{trainer.layout(), trainer.parameters(), *dataSet_};
  const std::string modelPath = settings_.logDir + "/model.bin";
  writeFileWhenRoom(modelPath, model::serializeModel(trained));
  writeFileWhenRoom(settings_.logDir + "/model.onnx", model::onnxModel(trained));
  model_.set(std::make_shared<serve::Predictor>(std::move(trained), modelPath));
  // Before result.json, which `pstrain local` stops the processes on.
  progress_.setResult({std::filesystem::absolute(modelPath).string(), result.globalStep,
                       result.testAccuracy.value_or(0), result.elapsedSeconds});
  Summary summary;
  summary.globalStep = result.globalStep;
  summary.testAccuracy = result.testAccuracy.value_or(0);
  summary.trainingElapsedSeconds = result.elapsedSeconds;
  summary.elapsedSeconds = elapsedSeconds;
  summary.ps = settings_.ps;
  summary.workers = int(result.mostWorkers);
  summary.blasCore = blasCoreInUse();
  summary.runId = std::to_string(runId);
  summary.pushEncoding = net::encodingName(settings_.pushEncoding);
  summary.pullEncoding = net::encodingName(settings_.pullEncoding);
  const auto cost = result.perStep();
  summary.computeMsPerStep = cost.computeMs;
  summary.communicationMsPerStep = cost.communicationMs;
  summary.waitingMsPerStep = cost.waitingMs;
  summary.bytesPerStep = cost.bytes;
  writeSummary(summary, settings_.logDir + "/result.json");
  log::logger("worker")->info("Worker 0: model written to {}/model.bin and model.onnx; {}",
                              settings_.logDir, describe(summary));
}

void Chief::scaleDown() {
  if (settings_.scaleDownOnCompletion.empty()) return;
  const auto env = config::processEnvironment();
  const auto deadline = apiDeadline(settings_.peerTimeoutSeconds);
  auto logger = log::logger("worker");
  try {
    for (const auto& name : settings_.scaleDownOnCompletion) {
      logger->info("Worker 0: run completed, scaling StatefulSet {} to 0", name);
      log::flush();
      const auto api = podApi(env);
      cluster::scaleToZero(api, envOr(env, "POD_NAMESPACE"), name, deadline,
                           apiWaiting(events_, api));
    }
  } catch (const Error& e) {
    // The run is complete all the same: a restart would only fail again, so stay up, idle.
    logger->warn("Worker 0: the run's pods stay up: {}", e.what());
  }
}

}  // namespace pstrain::app
