#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/in_process_cluster.hpp"

namespace pstrain::testing {

// A run of faults drawn from a seed, for an in-process cluster over TCP through a fault proxy in
// front of each ps (Transport::kTcpThroughProxy): the cluster's shape (1 to 3 ps, 2 to 4 workers,
// synchronous or not) and a list of faults, each applied once ps 0 reaches its global step. Steps,
// not times, trigger them, so that a seed replays the same schedule on a slower machine; how the
// faults fall among the pushes under way still follows the machine's timing.
class ChaosSchedule {
 public:
  enum class Kind {
    kCrashPs,       // kill -9 (crashPs), down for `duration`, started again
    kStopPs,        // SIGTERM (stopPs), down for `duration`, started again
    kLosePs,        // kill -9 with its disk lost (its checkpoint deleted), as kCrashPs
    kPausePs,       // SIGSTOP for `duration` (pausePs)
    kPauseWorker,   // SIGSTOP for `duration` (pauseWorker)
    kResetPs,       // each connection to the ps reset after `bytes` more bytes
    kDropPs,        // a black hole that drops for `duration`, then resets its connections
    kLatencyOn,     // `duration` ± `jitter` each way to and from the ps, until kLatencyOff
    kLatencyOff,
    kSliceOn,       // every byte to and from the ps written alone, until kSliceOff
    kSliceOff,
    kRecut,         // the settings name `target` ps: worker 0 re-cuts them
    kWorkerLeaves,  // kill -9 for good (removeWorker)
    kWorkerJoins,   // a worker new to the run
  };

  struct Action {
    std::uint64_t step = 0;  // ps 0's global step that triggers it
    Kind kind = Kind::kCrashPs;
    int target = 0;  // the ps or the worker; kRecut: the number of ps
    std::chrono::milliseconds duration{0};
    std::chrono::milliseconds jitter{0};
    size_t bytes = 0;
  };

  explicit ChaosSchedule(std::uint64_t seed);

  std::uint64_t seed() const { return seed_; }
  std::uint64_t trainSteps() const { return kTrainSteps; }
  const std::vector<Action>& actions() const { return actions_; }

  // The cluster's flags: its shape, a small model, and timeouts and checkpoints short enough
  // for the faults to be seen within seconds.
  std::vector<std::string> flags() const;
  // A line for the run, then one for each action: what a failing seed did, to read and replay.
  std::string describe() const;

  // Starts the ps and the workers, then applies each action once ps 0 reaches its step; returns
  // with the workers training on. Throws when ps 0 stays short of an action's step for a minute.
  void play(InProcessCluster& cluster) const;

 private:
  static constexpr std::uint64_t kTrainSteps = 1500;

  static std::string describe(const Action& action);

  std::uint64_t seed_;
  int ps_;
  int workers_;
  bool sync_;
  std::vector<Action> actions_;
};

}  // namespace pstrain::testing
