#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace pstrain::observe {

// What a ps knows of each worker that has said hello: whether a connection of it is open,
// whether it said it has finished, its last local step and batch loss, when it was last heard
// from. For the ps's /status, which worker 0's page gathers. Safe to use from every
// connection's thread.
class WorkerRoster {
 public:
  void joined(std::uint32_t worker);
  void stepped(std::uint32_t worker, std::uint64_t localStep);
  // The loss of the worker's batch that a global step applied.
  void lossOf(std::uint32_t worker, float loss);
  void finished(std::uint32_t worker, std::uint64_t localSteps);
  void left(std::uint32_t worker);

  // What the ps knows of one worker, now.
  struct Entry {
    std::uint32_t index = 0;
    const char* state = "";  // training, finished or disconnected
    std::uint64_t localStep = 0;
    float loss = NAN;  // not known yet
    double secondsSinceSeen = 0;
  };
  // Every worker that has said hello, by index.
  std::vector<Entry> entries() const;

 private:
  struct Worker {
    int connections = 0;
    bool finished = false;
    std::uint64_t localStep = 0;
    float loss = NAN;
    std::chrono::steady_clock::time_point seen = std::chrono::steady_clock::now();
  };
  mutable std::mutex mutex_;
  std::map<std::uint32_t, Worker> workers_;
};

}  // namespace pstrain::observe
