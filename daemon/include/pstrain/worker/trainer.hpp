#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/data/idx.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/net/connection.hpp"
#include "pstrain/ps/client.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "pstrain/worker/evaluator.hpp"
#include "pstrain/worker/trainer_observer.hpp"

namespace pstrain::worker {

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
};

// What a worker's training loop needs to know.
struct TrainerOptions {
  int index = 0;
  std::vector<int> hiddenUnits;
  int batchSize = 100;
  std::uint64_t trainSteps = 0;
  std::uint64_t seed = 1;
  int evalEverySteps = 0;  // global steps; chief only; 0: at the end only
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

  // `test` is used by the chief only and may be null for the others.
  TrainingResult run(const data::Examples& train, const data::Examples* test);

  // The model as trained: valid after run().
  std::vector<float> parameters() const { return {params_.begin(), params_.end()}; }
  const model::Layout& layout() const { return layout_; }

 private:
  const TrainerOptions options_;
  ps::Client& client_;
  TrainerObserver& observer_;
  const net::TrafficCounters& traffic_;
  model::Layout layout_;
  AlignedVector<float> params_;
  AlignedVector<float> gradient_;
};

}  // namespace pstrain::worker
