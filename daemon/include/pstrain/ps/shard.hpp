#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "pstrain/common/aligned_vector.hpp"
#include "pstrain/ps/buffer_pool.hpp"
#include "pstrain/ps/optimizer.hpp"
#include "pstrain/ps/shard_range.hpp"
#include "pstrain/ps/sync_learning_rate.hpp"

namespace pstrain::ps {

// One ps's parameters, its optimizer and the global step. Thread-safe: each worker connection
// pushes from its own thread.
//
// Asynchronous pushes that arrive together are combined: when no update is under way, every
// waiting request (up to Optimizer::kMaxSteps) goes into one batch, applied block by block, each
// block once through the cache for all its gradients. Each thread is woken only when its request
// needs it (to apply its batch, or with its answer): with many connections, no thread wakes to
// find nothing to do. Each gradient is still its own global step, applied in arrival order, so no
// step is lost or merged.
//
// The parameters are never changed where they are: an update reads them and writes the next ones
// into a buffer of their own, which becomes the parameters and is what every answer of the
// update carries. So answers need no copy, and an answer still being sent keeps the parameters
// it was given.
class Shard {
 public:
  // The size() parameters as an update left them, read-only: the shard's own, shared by every
  // answer given while they were current. The buffer returns to the shard's pool once the shard
  // has moved on and the last answer carrying it has been sent.
  using Params = std::shared_ptr<const float>;

  struct StepResult {
    std::uint64_t globalStep;
    bool applied;   // this push's gradient went into an update
    bool advanced;  // this push completed a global step (in sync mode: the one that closed it)
    bool done;      // the global step has reached trainSteps
    int averaged;   // gradients in the step this push completed (sync: those that came in time)
    int workers;    // sync: the workers connected when it was answered (setWorkers)
    Params params;  // the parameters after the step (empty from state())
    // The global step `params` are at: the pushes they hold. A worker's next gradient is computed
    // on them, so the ps learns its staleness from what it last sent.
    std::uint64_t paramsStep = 0;
    // Of an applied push: the steps applied between the parameters its gradient was computed on
    // (`basedOn`) and its own.
    std::uint64_t staleness = 0;
    // Of an applied push: the global step its gradient went into (sync: the step it waited for,
    // which `globalStep` may have passed by the time it is answered).
    std::uint64_t appliedStep = 0;
    // Sync: refused, its gradient computed on parameters older than a copy adopted since.
    bool replaced = false;
    // Sync: refused, its gradient computed on parameters of a step before the last.
    bool stale = false;
  };

  struct Options {
    std::uint64_t trainSteps = 0;
    // false: asynchronous, every push is one global step. true: each global step averages one
    // gradient from each worker connected (setWorkers), or from those that came within
    // syncTimeout of the step's first gradient.
    bool sync = false;
    std::chrono::milliseconds syncTimeout{30000};
    SyncLearningRate syncLearningRate;
    // The global index of its first parameter: where its checksums place its values.
    std::uint64_t offset = 0;
  };

  Shard(std::vector<float> initial, std::unique_ptr<Optimizer> optimizer, Options options);

  size_t size() const { return size_; }
  std::uint64_t trainSteps() const { return options_.trainSteps; }

  // Applies (or, in sync mode, contributes and waits for) one gradient of size() floats from
  // `worker`, and answers with the parameters as they are after the step. Once the global step
  // has reached trainSteps, or the shard is closed, gradients are no longer applied.
  // `basedOn` is the paramsStep of the parameters the gradient was computed on, `lag` the answers
  // the worker still awaited then (a sync gradient may be that many steps old).
  StepResult push(std::uint32_t worker, const float* gradient, std::uint64_t basedOn,
                  std::uint64_t lag = 0);

  // Answers with the parameters as the last finished update left them: it does not wait for one
  // under way.
  StepResult read();
  // read() for `worker`. In sync mode, once the step its gradient waits in (it reconnected while
  // its push waited at the barrier) is taken: the gradient it computes next is then of that
  // step's parameters, as every sync gradient is, not one step stale.
  StepResult read(std::uint32_t worker);

  StepResult state() const;

  // How many workers are connected now: in sync mode a step waits for that many gradients, so
  // a worker that joins is waited for from the next step on and one that leaves no longer.
  void setWorkers(int connected);

  // Sync mode: the gradients given to the step under way, whose pushes wait at its barrier.
  int arrivals() const;

  // Applies no push from now on (the process is stopping), and releases pushes waiting at the
  // sync barrier: whatever a final checkpoint holds is all that was ever acknowledged as applied.
  void close();

  // The parameters and optimizer state at one global step, for a checkpoint; restore() takes
  // what serialize() wrote for a shard of the same size and optimizer (else DecodeError).
  struct Snapshot {
    std::uint64_t globalStep;
    std::vector<std::uint8_t> bytes;
    std::uint64_t checksum;  // of the values it holds (checksum())
  };
  Snapshot serialize() const;
  void restore(std::uint64_t globalStep, const std::vector<std::uint8_t>& bytes);

  // The parameters, optimizer state and global step as the last finished update left them: what
  // a re-cut moves to the ps of the new cut.
  struct Slice {
    std::uint64_t globalStep;
    std::vector<float> params;
    OptimizerState optimizer;
  };
  Slice slice() const;
  // The checksum of the parameters and optimizer state as the last finished update left them
  // (common/value_checksum.hpp), for the run's history.
  std::uint64_t checksum() const;
  // Of a shard made for a re-cut, before it serves: its parameters (those it was made with) are
  // at `globalStep`, and its optimizer goes on from `state` (else DecodeError).
  void resume(std::uint64_t globalStep, const OptimizerState& state);

  // Takes size() `values` as the parameters at `globalStep`, provided it is later than the
  // shard's step: a ps that lost its checkpoint, or restored one older than the steps the workers
  // saw, given a worker's copy. Only a ps that lost steps is behind a copy, so the steps it took
  // since it started are on older parameters than the copy holds: they are undone (the
  // `recovered` record says from which step), and a sync step under way is refused as replaced.
  // The optimizer state stays as it started or was restored (Adam's moments zero without a
  // checkpoint). Returns the checksum of the shard as adopted, or nothing where it was refused.
  std::optional<std::uint64_t> adopt(std::uint64_t globalStep, const float* values);

 private:
  struct Request;
  struct Batch;

  StepResult pushAsync(const float* gradient, std::uint64_t basedOn);
  StepResult pushSync(std::uint32_t worker, const float* gradient, std::uint64_t basedOn,
                      std::uint64_t lag);
  // Sync mode: until `worker`'s last push has left the barrier (the caller holds `lock`).
  void awaitBarrierLeft(std::unique_lock<std::mutex>& lock, std::uint32_t worker);
  // Batches the waiting requests while none is in flight (the caller holds the mutex). `self`
  // is the calling thread's request, if it has one waiting or in the batch just finished.
  void startBatches(Request* self);
  void applyBlocks(Batch& batch, Request* self);
  void finishBatch(Batch& batch, Request* self);
  // Takes the sync step with the gradients summed, or, where every push that came was stale,
  // lets them go without one; returns whether it took the step.
  bool completeSyncStep();
  // No gradient is applied any more: closed, or at trainSteps (the caller holds the mutex).
  bool overLocked() const;
  StepResult readLocked() const;
  std::uint64_t checksumLocked() const;
  StepResult resultLocked(bool applied, bool advanced, int averaged) const;
  // Makes `params` the parameters at `globalStep` (the caller holds the mutex, no batch in
  // flight). Answers already sent may still carry the old buffer: the new values come in their own.
  void replaceLocked(std::shared_ptr<float> params, std::uint64_t globalStep);

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  const size_t size_;
  std::unique_ptr<Optimizer> optimizer_;
  const Options options_;
  std::shared_ptr<BufferPool> buffers_;  // the parameters, current and as answers still carry them
  Params params_;                        // at paramsStep_
  std::uint64_t paramsStep_ = 0;         // behind globalStep_ while a batch is applied
  std::uint64_t globalStep_ = 0;
  std::uint64_t adoptedStep_ = 0;  // of the copy adopted last, if any
  std::uint64_t adoptions_ = 0;    // copies adopted: a sync push waiting across one was replaced
  bool closed_ = false;
  // Asynchronous mode: requests not yet in a batch, and the batch being applied.
  std::deque<Request*> waiting_;
  std::shared_ptr<Batch> inFlight_;
  // Synchronous mode: the sum of this step's gradients and how many there are, the workers that
  // came to it (stale pushes too) and how many are connected, and how many times the barrier let
  // its pushes go (a step, an adoption, a step of stale pushes alone).
  AlignedVector<float> gradientSum_;
  int summed_ = 0;
  std::set<std::uint32_t> contributed_;
  int workers_ = 0;
  int arrivals_ = 0;
  std::uint64_t releases_ = 0;
  std::chrono::steady_clock::time_point stepDeadline_;
};

}  // namespace pstrain::ps
