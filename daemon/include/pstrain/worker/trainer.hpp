#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/net/connection.hpp"
#include "pstrain/ps/client.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "pstrain/worker/batch_gradient.hpp"
#include "pstrain/worker/batch_sampler.hpp"
#include "pstrain/worker/evaluator.hpp"
#include "pstrain/worker/trainer_observer.hpp"

namespace pstrain::worker {

// A worker's average step: where its time went (ms) and the bytes it exchanged.
struct StepCosts {
  double computeMs = 0;
  double communicationMs = 0;
  double waitingMs = 0;
  double bytes = 0;
};

struct TrainingResult {
  std::uint64_t globalStep = 0;
  std::uint64_t localSteps = 0;
  double elapsedSeconds = 0;
  std::optional<double> testAccuracy;  // worker 0 only
  // Where the time of the training steps went: the gradient, the ps holding the request (lock,
  // optimizer, sync barrier: waiting), and the rest of the round trips (communication).
  double computeSeconds = 0;
  double waitingSeconds = 0;
  double communicationSeconds = 0;
  std::uint64_t bytesExchanged = 0;  // sent and received by this worker
  std::uint32_t mostWorkers = 0;     // connected at once, as far as this worker was told

  // Per local step; zeros before the first.
  StepCosts perStep() const;
};

// What a worker's training loop needs to know.
struct TrainerOptions {
  int index = 0;
  std::vector<int> hiddenUnits;
  int batchSize = 100;
  std::uint64_t trainSteps = 0;
  std::uint64_t seed = 1;
  int evalEverySteps = 0;  // global steps; chief only; 0: at the end only
  // Weight gradients of small batches go as their factors (ps::PushEncoding); not in a lossy
  // push encoding, which encodes the dense gradient and keeps what it did not send.
  bool factorGradients = true;
};

// One worker's training loop: computes the gradient of a batch of its own examples on the
// parameters at hand and exchanges it through the ps client for the parameters after the step,
// until every ps reports the end of training. Worker 0 (the chief) evaluates test accuracy every
// evalEverySteps global steps and at the end.
class Trainer {
 public:
  // `traffic`: the bytes of the client's channels, for the result.
  Trainer(TrainerOptions options, ps::Client& client, TrainerObserver& observer,
          const net::TrafficCounters& traffic);

  // `test`: the chief's test set, which it evaluates on; null for the other workers.
  TrainingResult run(const data::Examples& train, const data::Examples* test);

  // The model as trained: valid after run().
  std::vector<float> parameters() const { return {params_.begin(), params_.end()}; }
  const model::Layout& layout() const { return layout_; }

 private:
  // The part of the training set this worker samples from: it changes as workers join and leave.
  struct Part {
    BatchSampler sampler;
    size_t total;                             // examples in the training set
    ps::Membership::Division division{0, 0};  // none yet
  };

  // Pulls every ps's parameters into params_; the global step they are at.
  std::uint64_t pull();
  // Takes up the part ps 0 gives this worker, if it changed.
  void followDivision(Part& part, TrainingResult& result);
  void trainUntilDone(Part& part, BatchGradient& batch, Evaluator* evaluator,
                      TrainingResult& result);
  // Pushes `gradient` and takes the parameters after the step; whether a ps applied it.
  bool exchange(const ps::Gradient& gradient, float loss, TrainingResult& result);
  // The chief, after training: the final model's accuracy, once earlier evaluations are in.
  void evaluateFinal(Evaluator& evaluator, const data::Examples& test, TrainingResult& result);
  void reportAccuracy(const Evaluator::Result& evaluation);

  const TrainerOptions options_;
  ps::Client& client_;
  TrainerObserver& observer_;
  const net::TrafficCounters& traffic_;
  model::Layout layout_;
  AlignedVector<float> params_;
};

}  // namespace pstrain::worker
