#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace pstrain::ps {

// The workers connected to a ps now, each counted once however many channels it has open (one
// that reconnects may be back before the ps has seen its old channel end). Workers join and
// leave during a run: their number is what a sync step waits for, and a worker's rank among
// them (by index) says which part of the training set it samples from.
class Membership {
 public:
  struct Division {
    std::uint32_t rank;     // of the worker among those connected, by index
    std::uint32_t workers;  // connected
    bool operator==(const Division& other) const {
      return rank == other.rank && workers == other.workers;
    }
  };

  // `changed` is told the number of workers connected whenever it changes, in order.
  explicit Membership(std::function<void(int connected)> changed) : changed_(std::move(changed)) {}

  void join(std::uint32_t worker);
  void leave(std::uint32_t worker);

  // `worker`'s place among the connected workers; {0, 1} for one not connected.
  Division divisionOf(std::uint32_t worker) const;

 private:
  const std::function<void(int)> changed_;
  mutable std::mutex mutex_;
  std::map<std::uint32_t, int> channels_;  // by worker index, only those with a channel open
};

}  // namespace pstrain::ps
