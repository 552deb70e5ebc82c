#include <chrono>

#include "pstrain/app/command_flags.hpp"
#include "pstrain/app/commands.hpp"
#include "pstrain/app/summary.hpp"
#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/cpu_limit.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/data/mnist.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/ps/optimizer.hpp"
#include "pstrain/worker/batch_sampler.hpp"

namespace pstrain::app {

int runSingle(const std::vector<std::string>& originalArgs) {
  const auto start = std::chrono::steady_clock::now();
  auto args = originalArgs;
  const auto summaryPath = takeFlag(args, "--summary-json");
  const auto settings = config::load({args, config::processEnvironment()});
  log::initConsole();
  // One core: the bound a worker process is measured against.
  limitBlasThreads(1);
  auto files = data::findMnistFiles(settings.dataDir);
  auto train = data::loadTrainingSet(files);
  auto test = data::loadTestSet(files);

  model::Mlp mlp(model::Layout::mnist(settings.hiddenUnits));
  const auto initial = model::initialParameters(mlp.layout(), settings.seed);
  AlignedVector<float> params(initial.begin(), initial.end());
  AlignedVector<float> gradient(params.size());
  auto optimizer = ps::makeOptimizer(settings.optimizer, params.size(), settings.learningRate);
  worker::BatchSampler sampler(train.count, size_t(settings.batchSize), settings.seed + 1);
  arma::fmat inputs;
  std::vector<std::uint8_t> labels(size_t(settings.batchSize));

  const auto trainingStart = std::chrono::steady_clock::now();
  for (std::int64_t step = 0; step < settings.trainSteps; ++step) {
    const std::uint32_t* batch = sampler.next();
    model::gatherInputs(train.pixels.data(), train.imageSize(), batch, labels.size(), inputs);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = train.labels[batch[i]];
    mlp.lossAndGradient(params.data(), inputs, labels.data(), gradient.data());
    optimizer->apply(params.data(), gradient.data(), params.size());
  }
  const double trainingSeconds = secondsSince(trainingStart);

  model::Mlp evaluator(mlp.layout());
  Summary summary;
  summary.globalStep = std::uint64_t(settings.trainSteps);
  summary.testAccuracy = model::accuracy(evaluator, params.data(), test.pixels.data(),
                                         test.labels.data(), test.count);
  summary.trainingElapsedSeconds = trainingSeconds;
  summary.elapsedSeconds = secondsSince(start);
  summary.workers = 1;
  summary.blasCore = blasCoreInUse();
  log::logger("single")->info("one process, no network: {}", describe(summary));
  if (!summaryPath.empty()) writeSummary(summary, summaryPath);
  return 0;
}

}  // namespace pstrain::app
