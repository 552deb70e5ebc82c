#include "pstrain/worker/trainer.hpp"

#include <algorithm>
#include <chrono>

#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/worker/batch_sampler.hpp"

namespace pstrain::worker {

Trainer::Trainer(TrainerOptions options, ps::Client& client, TrainerObserver& observer,
                 const net::TrafficCounters& traffic)
    : options_(std::move(options)),
      client_(client),
      observer_(observer),
      traffic_(traffic),
      layout_(model::Layout::mnist(options_.hiddenUnits)),
      params_(layout_.parameterCount()),
      gradient_(layout_.parameterCount()) {}

TrainingResult Trainer::run(const data::Examples& train, const data::Examples* test) {
  auto logger = log::logger("worker");
  const int index = options_.index;
  const bool chief = index == 0 && test != nullptr;
  TrainingResult result;
  client_.connect();
  auto pull = [&] {
    const auto start = std::chrono::steady_clock::now();
    auto exchange = client_.pull(params_.data());
    observer_.pulled(secondsSince(start));
    return exchange;
  };
  // The run's step, also for a worker that joins a run as it ends and makes no step.
  std::uint64_t globalStep = pull().globalStep;
  // The part of the training set this worker samples from: it changes as workers join and leave.
  BatchSampler sampler(train.count, size_t(options_.batchSize),
                       options_.seed + 1 + size_t(index));
  ps::Membership::Division current{0, 0};  // none yet
  auto divide = [&] {
    const auto part = client_.division();
    if (part == current) return;
    current = part;
    sampler.divide(part.rank, part.workers);
    result.mostWorkers = std::max(result.mostWorkers, part.workers);
    observer_.divided(part.rank, part.workers, sampler.slice(), train.count);
  };
  divide();
  observer_.training();

  model::Mlp mlp(layout_);
  auto reportAccuracy = [&](const Evaluator::Result& evaluation) {
    observer_.evaluated(evaluation.localStep, evaluation.globalStep, evaluation.accuracy,
                        evaluation.takenAt);
  };
  // The chief's evaluations during training, off the training thread.
  std::optional<Evaluator> evaluator;
  if (chief) evaluator.emplace(layout_, *test, reportAccuracy);

  std::vector<std::uint8_t> labels(size_t(options_.batchSize));
  AlignedVector<float> inputMemory(train.imageSize() * labels.size());
  arma::fmat inputs(inputMemory.data(), arma::uword(train.imageSize()), arma::uword(labels.size()),
                    false, true);
  // The layers whose weight gradients go to the ps as factors (ps::PushEncoding): the model
  // leaves them as delta and input, and skips the outer product.
  const auto factored = ps::factoredLayers(layout_, labels.size());
  const auto gradient = ps::gradientOf(mlp, inputs, gradient_.data(), factored);
  const auto start = std::chrono::steady_clock::now();
  const auto factoredLayers = std::count(factored.begin(), factored.end(), true);
  logger->info("Worker {}: training on {} examples, batch {}, until global step {}{}", index,
               train.count, options_.batchSize, options_.trainSteps,
               factoredLayers == 0 ? ""
                                   : fmt::format("; the weight gradients of {} of {} layers go "
                                                 "to the ps as their factors",
                                                 factoredLayers, layout_.layerCount()));

  const auto bytesBefore = traffic_.sent + traffic_.received;
  // The gradient of the next batch, on the parameters at hand.
  auto computeGradient = [&] {
    const auto computeStart = std::chrono::steady_clock::now();
    const std::uint32_t* batch = sampler.next();
    model::gatherInputs(train.pixels.data(), train.imageSize(), batch, labels.size(), inputs);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = train.labels[batch[i]];
    float loss =
        mlp.lossAndGradient(params_.data(), inputs, labels.data(), gradient_.data(), factored);
    result.computeSeconds += secondsSince(computeStart);
    return loss;
  };
  const auto evalEvery = std::uint64_t(std::max(1, options_.evalEverySteps));
  std::uint64_t nextEvaluation = evalEvery;
  while (!client_.done()) {
    divide();
    float loss = computeGradient();
    const auto exchangeStart = std::chrono::steady_clock::now();
    auto exchange =
        client_.pushPull(gradient, params_.data(), result.localSteps + 1, loss);
    const double exchangeSeconds = secondsSince(exchangeStart);
    observer_.exchanged(exchangeSeconds);
    result.waitingSeconds += std::min(exchange.serviceSeconds, exchangeSeconds);
    result.communicationSeconds += std::max(0.0, exchangeSeconds - exchange.serviceSeconds);
    globalStep = exchange.globalStep;

    if (exchange.applied) {
      ++result.localSteps;
      observer_.stepDone(result.localSteps, globalStep, loss);
      // Every evalEverySteps global steps, the run's clock: worker 0's own steps are a share of
      // them that changes with the workers computing, and the gate's turns.
      if (chief && options_.evalEverySteps > 0 && globalStep >= nextEvaluation) {
        evaluator->submit(params_.data(), result.localSteps, globalStep);
        nextEvaluation = (globalStep / evalEvery + 1) * evalEvery;
      }
    }
  }

  result.elapsedSeconds = secondsSince(start);
  result.bytesExchanged = traffic_.sent + traffic_.received - bytesBefore;
  if (result.localSteps > 0) {
    const double steps = double(result.localSteps);
    logger->info("Worker {}: per step {:.3f} ms computing, {:.3f} ms communicating, {:.3f} ms "
                 "waiting for the ps, {:.0f} bytes exchanged",
                 index, 1e3 * result.computeSeconds / steps,
                 1e3 * result.communicationSeconds / steps, 1e3 * result.waitingSeconds / steps,
                 double(result.bytesExchanged) / steps);
  }
  observer_.trainingEnded(globalStep, result.elapsedSeconds);
  if (chief) {
    evaluator->drain();
    // Every ps has stopped applying gradients, so this pull sees the final model.
    globalStep = pull().globalStep;
    const double takenAt = unixTime();
    result.testAccuracy = model::accuracy(mlp, params_.data(), test->pixels.data(),
                                          test->labels.data(), test->count);
    reportAccuracy({result.localSteps, globalStep, takenAt, *result.testAccuracy});
  }
  result.globalStep = globalStep;
  observer_.done(globalStep);
  client_.finish(result.localSteps);
  return result;
}

}  // namespace pstrain::worker
