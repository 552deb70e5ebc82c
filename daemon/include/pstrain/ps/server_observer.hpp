#pragma once

#include <cstdint>
#include <string>

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

  virtual ~ServerObserver() = default;

  virtual void restored(std::uint64_t globalStep, const std::string& path, bool completed) = 0;
  // The shard was taken from `worker`'s copy at `globalStep` (no checkpoint was restored);
  // `completed`: it was at the last step.
  virtual void shardRecovered(std::uint32_t worker, std::uint64_t globalStep, bool completed) = 0;
  // `worker`'s copy at `copyStep` came after the shard had moved on (to `globalStep`).
  virtual void shardCopyIgnored(std::uint32_t worker, std::uint64_t copyStep,
                                std::uint64_t globalStep) = 0;
  virtual void checkpointWritten(std::uint64_t globalStep, const std::string& path) = 0;
  // The ps serves; `completed`: the run it restored had completed already.
  virtual void serving(bool completed) = 0;
  // Worker `worker` said hello from `address` (its latest connection).
  virtual void workerArrived(std::uint32_t worker, const std::string& address) = 0;
  virtual void workerWaitsForChief(std::uint32_t worker) = 0;
  // Its connection was admitted at `globalStep` / has ended.
  virtual void workerJoined(std::uint32_t worker, const std::string& address,
                            std::uint64_t globalStep) = 0;
  virtual void workerLeft(std::uint32_t worker) = 0;
  virtual void pulled(double seconds) = 0;
  // A push of `worker`'s step `localStep`, held by the ps for `seconds`.
  virtual void pushed(std::uint32_t worker, std::uint64_t localStep, double seconds) = 0;
  // A push went into a global step; its gradient was computed `staleness` steps before it.
  virtual void pushApplied(std::uint64_t staleness) = 0;
  virtual void stepApplied(const Step& step) = 0;
  // The last global step was applied `elapsedSeconds` after the chief arrived.
  virtual void trainingCompleted(std::uint64_t globalStep, double elapsedSeconds) = 0;
  virtual void workerFinished(std::uint32_t worker, std::uint64_t localSteps) = 0;
};

}  // namespace pstrain::ps
