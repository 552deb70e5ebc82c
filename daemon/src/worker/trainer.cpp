#include "pstrain/worker/trainer.hpp"

#include <algorithm>
#include <chrono>

#include "pstrain/common/timestamp.hpp"

namespace pstrain::worker {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

StepCosts TrainingResult::perStep() const {
  if (localSteps == 0) return {};
  const double steps = double(localSteps);
  return {1e3 * computeSeconds / steps, 1e3 * communicationSeconds / steps,
          1e3 * waitingSeconds / steps, double(bytesExchanged) / steps};
}

Trainer::Trainer(TrainerOptions options, ps::Client& client, TrainerObserver& observer,
                 const net::TrafficCounters& traffic)
    : options_(std::move(options)),
      client_(client),
      observer_(observer),
      traffic_(traffic),
      layout_(model::Layout::mnist(options_.hiddenUnits)),
      params_(layout_.parameterCount()) {}

TrainingResult Trainer::run(const data::Examples& train, const data::Examples* test) {
  // The chief is the worker given the test set.
  const bool chief = test != nullptr;
  TrainingResult result;
  client_.connect();
  // The run's step, also for a worker that joins a run as it ends and makes no step.
  result.globalStep = pull();
  Part part{BatchSampler(train.count, size_t(options_.batchSize),
                         options_.seed + 1 + size_t(options_.index)),
            train.count};
  followDivision(part, result);
  // The chief's evaluations during training, off the training thread.
  std::optional<Evaluator> evaluator;
  if (chief) {
    evaluator.emplace(layout_, *test,
                      [this](const Evaluator::Result& evaluation) { reportAccuracy(evaluation); });
  }
  BatchGradient batch(layout_, train, size_t(options_.batchSize), options_.factorGradients);
  observer_.training({train.count, options_.batchSize, options_.trainSteps, batch.factoredLayers(),
                      layout_.layerCount()});
  const auto start = Clock::now();
  const auto bytesBefore = traffic_.sent + traffic_.received;
  trainUntilDone(part, batch, evaluator ? &*evaluator : nullptr, result);
  result.elapsedSeconds = secondsSince(start);
  result.bytesExchanged = traffic_.sent + traffic_.received - bytesBefore;
  observer_.trainingEnded(result);
  if (chief) evaluateFinal(*evaluator, *test, result);
  observer_.done(result.globalStep);
  client_.finish(result.localSteps);
  return result;
}

std::uint64_t Trainer::pull() {
  const auto start = Clock::now();
  const auto exchange = client_.pull(params_.data());
  observer_.pulled(secondsSince(start));
  return exchange.globalStep;
}

void Trainer::followDivision(Part& part, TrainingResult& result) {
  const auto division = client_.division();
  if (division == part.division) return;
  part.division = division;
  part.sampler.divide(division.rank, division.workers);
  result.mostWorkers = std::max(result.mostWorkers, division.workers);
  observer_.divided(division.rank, division.workers, part.sampler.slice(), part.total);
}

void Trainer::trainUntilDone(Part& part, BatchGradient& batch, Evaluator* evaluator,
                             TrainingResult& result) {
  const auto evalEvery = std::uint64_t(std::max(1, options_.evalEverySteps));
  std::uint64_t nextEvaluation = evalEvery;
  while (!client_.done()) {
    followDivision(part, result);
    const auto computeStart = Clock::now();
    const float loss = batch.compute(params_.data(), part.sampler.next());
    result.computeSeconds += secondsSince(computeStart);
    if (!exchange(batch.gradient(), loss, result)) continue;
    observer_.stepDone(result.localSteps, result.globalStep, loss);
    // Every evalEverySteps global steps, the run's clock: worker 0's own steps are a share of
    // them that changes with the workers computing, and the gate's turns.
    if (evaluator && options_.evalEverySteps > 0 && result.globalStep >= nextEvaluation) {
      evaluator->submit(params_.data(), result.localSteps, result.globalStep);
      nextEvaluation = (result.globalStep / evalEvery + 1) * evalEvery;
    }
  }
}

bool Trainer::exchange(const ps::Gradient& gradient, float loss, TrainingResult& result) {
  const auto start = Clock::now();
  // Numbered after those in flight.
  const auto localStep = result.localSteps + std::uint64_t(client_.inFlight()) + 1;
  const auto exchange = client_.pushPull(gradient, params_.data(), localStep, loss);
  // In flight: the next gradient is computed on the same parameters.
  if (!exchange.answered) return false;
  const double seconds = secondsSince(start);
  observer_.exchanged(seconds);
  result.waitingSeconds += std::min(exchange.serviceSeconds, seconds);
  result.communicationSeconds += std::max(0.0, seconds - exchange.serviceSeconds);
  result.globalStep = exchange.globalStep;
  if (exchange.applied) ++result.localSteps;
  return exchange.applied;
}

void Trainer::evaluateFinal(Evaluator& evaluator, const data::Examples& test,
                            TrainingResult& result) {
  evaluator.drain();
  // Every ps has stopped applying gradients, so this pull sees the final model.
  result.globalStep = pull();
  const double takenAt = unixTime();
  model::Mlp mlp(layout_);
  result.testAccuracy = model::accuracy(mlp, params_.data(), test.pixels.data(),
                                        test.labels.data(), test.count);
  reportAccuracy({result.localSteps, result.globalStep, takenAt, *result.testAccuracy});
}

void Trainer::reportAccuracy(const Evaluator::Result& evaluation) {
  observer_.evaluated(evaluation.localStep, evaluation.globalStep, evaluation.accuracy,
                      evaluation.takenAt);
}

}  // namespace pstrain::worker
