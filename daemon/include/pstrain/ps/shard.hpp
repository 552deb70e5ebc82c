#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "pstrain/ps/optimizer.hpp"

namespace pstrain::ps {

// The contiguous slice [offset, offset + count) of the flat parameter vector that one ps owns.
struct ShardRange {
  size_t offset;
  size_t count;
};

// Splits `parameterCount` parameters into `shards` contiguous slices whose sizes differ by at
// most one, whatever the tensor boundaries: every ps carries the same load.
ShardRange shardRange(size_t parameterCount, int shards, int index);

// One ps's parameters, its optimizer and the global step. Thread-safe: each worker connection
// pushes from its own thread.
class Shard {
 public:
  struct StepResult {
    std::uint64_t globalStep;
    bool applied;   // this push's gradient went into an update
    bool advanced;  // this push completed a global step (in sync mode: the last one to arrive)
    bool done;      // the global step has reached trainSteps
  };

  // syncWorkers = 0: asynchronous, every push is one global step. Otherwise each global step
  // averages one gradient from each of syncWorkers workers.
  Shard(std::vector<float> initial, std::unique_ptr<Optimizer> optimizer,
        std::uint64_t trainSteps, int syncWorkers);

  size_t size() const { return params_.size(); }
  std::uint64_t trainSteps() const { return trainSteps_; }

  // Applies (or, in sync mode, contributes and waits for) one gradient of size() floats, then
  // copies the parameters as they are after the step into `out`. Once the global step has
  // reached trainSteps, gradients are no longer applied.
  StepResult push(const float* gradient, float* out);

  // Copies the current parameters into `out`.
  StepResult read(float* out) const;

  StepResult state() const;

  // Applies no push from now on (the process is stopping): whatever a final checkpoint holds is
  // all that was ever acknowledged as applied.
  void close();

  // The global step, parameters and optimizer state, for a checkpoint; restore() takes what
  // serialize() wrote for a shard of the same size and optimizer (else ProtocolError).
  std::vector<std::uint8_t> serialize() const;
  void restore(const std::vector<std::uint8_t>& bytes);

 private:
  StepResult resultLocked(bool applied, bool advanced) const;

  mutable std::mutex mutex_;
  std::condition_variable stepAdvanced_;
  std::vector<float> params_;
  std::unique_ptr<Optimizer> optimizer_;
  std::uint64_t trainSteps_;
  std::uint64_t globalStep_ = 0;
  int syncWorkers_;
  std::vector<float> gradientSum_;
  int arrivals_ = 0;
  bool closed_ = false;
};

}  // namespace pstrain::ps
