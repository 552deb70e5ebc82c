#pragma once

#include <cstdint>

#include "pstrain/worker/slice.hpp"

namespace pstrain::worker {

struct TrainingResult;

// What a worker is about to train on.
struct TrainingPlan {
  size_t examples = 0;  // in the training set
  int batchSize = 0;
  std::uint64_t trainSteps = 0;
  long factoredLayers = 0;  // whose weight gradients go to the ps as their factors
  size_t layers = 0;
};

// What a worker's training loop reports: the narrow view of metrics, events and log lines that
// the loop has (app/ implements it onto them).
class TrainerObserver {
 public:
  virtual ~TrainerObserver() = default;

  // The worker samples from examples [slice.begin, slice.end) of `total` from now on: part `rank`
  // of `workers`, one for each worker connected.
  virtual void divided(std::uint32_t rank, std::uint32_t workers, const Slice& slice,
                       size_t total) = 0;
  // The first parameters are in: training starts.
  virtual void training(const TrainingPlan& plan) = 0;
  virtual void pulled(double seconds) = 0;
  // A push's round trip.
  virtual void exchanged(double seconds) = 0;
  // The worker's step `localStep` was applied; the ps are at `globalStep`.
  virtual void stepDone(std::uint64_t localStep, std::uint64_t globalStep, float loss) = 0;
  // The test accuracy of the parameters of `globalStep`, taken at `takenAt` (Unix seconds).
  virtual void evaluated(std::uint64_t localStep, std::uint64_t globalStep, double accuracy,
                         double takenAt) = 0;
  // Every ps has reached the last step, result.globalStep as far as the worker saw: the training
  // loop's result so far (the chief's final evaluation follows).
  virtual void trainingEnded(const TrainingResult& result) = 0;
  // After the chief's last evaluation: the run ended at `globalStep`.
  virtual void done(std::uint64_t globalStep) = 0;
};

}  // namespace pstrain::worker
