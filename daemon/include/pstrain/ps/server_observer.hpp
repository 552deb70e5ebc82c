#pragma once

#include <cstdint>
#include <string>

#include "pstrain/ps/cut_position.hpp"

namespace pstrain::ps {

// What a ps reports as it serves: the narrow view of metrics, events and log lines that the ps
// code has (app/ implements it onto them). Called from every connection's thread.
class ServerObserver {
 public:
  // A global step applied by a push.
  struct Step {
    std::uint64_t globalStep;
    float loss;                // of the worker's batch
    std::uint32_t worker;
    std::uint64_t localStep;   // of the worker
    int averaged;              // sync: the gradients the step averaged, of `syncWorkers`
    int syncWorkers;           // the workers connected when it was taken; 0: asynchronous
    std::int64_t syncTimeoutMs;  // how long a sync step waits for the others
    bool done;                 // the last step of the run
  };

  // A push whose gradient went into a global step: whose it was (the worker, its client's
  // incarnation and push number) and where it went.
  struct AppliedPush {
    std::uint32_t worker;
    std::uint64_t incarnation;
    std::uint64_t pushNumber;
    std::uint64_t generation;  // of the cut that applied it
    std::uint64_t globalStep;  // the step its gradient went into
    // The steps applied between the parameters its gradient was computed on and its own.
    std::uint64_t staleness;
    bool closedStep;  // it completed its step (async: every push; sync: the last to arrive)
    // The worker's answers in flight when it computed the gradient (net::Push): in sync mode,
    // where each answer is one step, the most its staleness can be.
    std::uint32_t lag;
  };

  // Why a push went into no step.
  enum class Refusal : std::uint8_t {
    kDone = 1,  // the run had reached its last step
    kStopped,   // the ps is stopping
    kFrozen,    // a re-cut froze the cut
    kRecut,     // it came to a cut that a re-cut had replaced
    kReplaced,  // sync: computed on parameters the ps has since replaced with a worker's copy
    kStale,     // sync: computed on parameters of a step before the last
  };

  // A slice's values as the ps held them at one moment, for the run's history: the cut they are
  // of, where they lie in the parameter vector, and the checksum of the parameters and optimizer
  // state (common/value_checksum.hpp), which compares slices however they were cut.
  struct SliceValues {
    std::uint64_t generation;
    std::uint64_t offset;
    std::uint64_t count;
    std::uint64_t checksum;

    static SliceValues of(const CutPosition& cut, std::uint64_t checksum) {
      return {cut.generation, cut.range.offset, cut.range.count, checksum};
    }
  };

  virtual ~ServerObserver() = default;

  // The ps holds `range` of the model's `parameterCount` parameters, as `description` says
  // (optimizer, mode, encodings).
  virtual void loaded(const ShardRange& range, size_t parameterCount,
                      const std::string& description) = 0;
  // The checkpoint at `path` is of run `otherRun`, not this one (`runId`): the ps starts afresh.
  virtual void checkpointIgnored(const std::string& path, std::uint64_t otherRun,
                                 std::uint64_t runId) = 0;
  // A periodic checkpoint could not be written: `what` went wrong; the next is tried on time.
  virtual void checkpointFailed(const std::string& what) = 0;
  // The shard came from the checkpoint at `path` (of the cut the ps serves next: serving()).
  virtual void restored(const SliceValues& slice, std::uint64_t globalStep,
                        const std::string& path, bool completed) = 0;
  // The shard was taken from `worker`'s copy at `globalStep`, in place of the one it started
  // with at `fromStep` (0: no checkpoint; else an older checkpoint's); `completed`: it was at
  // the last step.
  virtual void shardRecovered(std::uint32_t worker, const SliceValues& slice,
                              std::uint64_t fromStep, std::uint64_t globalStep,
                              bool completed) = 0;
  // `worker`'s copy at `copyStep` came after the shard had moved on (to `globalStep`).
  virtual void shardCopyIgnored(std::uint32_t worker, std::uint64_t copyStep,
                                std::uint64_t globalStep) = 0;
  // A re-cut froze the shard (`frozen`, at `globalStep`) for the cut of `generation`; the ps
  // serves a new cut (count 0: it is out of the run) from values of `checksum`; a re-cut that did
  // not install a cut gave the frozen one back.
  virtual void cutFrozen(std::uint64_t generation, const SliceValues& frozen,
                         std::uint64_t globalStep) = 0;
  virtual void cutInstalled(const CutPosition& cut, std::uint64_t globalStep,
                            std::uint64_t checksum) = 0;
  virtual void cutThawed(const SliceValues& slice, std::uint64_t globalStep) = 0;
  virtual void checkpointWritten(const SliceValues& slice, std::uint64_t globalStep,
                                 const std::string& path) = 0;
  // The ps serves `cut` from `globalStep`; `completed`: the run it restored had completed already.
  virtual void serving(const CutPosition& cut, std::uint64_t globalStep, bool completed) = 0;
  // Worker `worker` said hello from `address` (its latest connection).
  virtual void workerArrived(std::uint32_t worker, const std::string& address) = 0;
  virtual void workerWaitsForChief(std::uint32_t worker) = 0;
  // Its connection was admitted at `globalStep` / has ended.
  virtual void workerJoined(std::uint32_t worker, const std::string& address,
                            std::uint64_t globalStep) = 0;
  virtual void workerLeft(std::uint32_t worker) = 0;
  // A pull answered with the parameters at `globalStep`, held by the ps for `seconds`.
  virtual void pulled(std::uint64_t globalStep, double seconds) = 0;
  // A push of `worker`'s step `localStep`, held by the ps for `seconds`.
  virtual void pushed(std::uint32_t worker, std::uint64_t localStep, double seconds) = 0;
  virtual void pushApplied(const AppliedPush& push) = 0;
  // `worker`'s push went into no step of cut `generation`, at `globalStep`.
  virtual void pushRefused(std::uint32_t worker, std::uint64_t incarnation,
                           std::uint64_t pushNumber, std::uint64_t generation,
                           std::uint64_t globalStep, Refusal why) = 0;
  virtual void stepApplied(const Step& step) = 0;
  // The last global step was applied `elapsedSeconds` after the chief arrived.
  virtual void trainingCompleted(std::uint64_t globalStep, double elapsedSeconds) = 0;
  virtual void workerFinished(std::uint32_t worker, std::uint64_t localSteps) = 0;
};

}  // namespace pstrain::ps
