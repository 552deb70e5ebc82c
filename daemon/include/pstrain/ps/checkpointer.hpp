#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// A ps's checkpoints of its shard: restores one of the same run when it is made, writes one
// every `everySeconds` on a thread of its own, and whenever write() is called (the last step,
// SIGTERM). A checkpoint is the shard, its optimizer state and the global step.
class Checkpointer {
 public:
  struct Options {
    int index = 0;               // of the ps, for its log lines
    std::string path;            // "" for none
    double everySeconds = 0;     // 0: no periodic checkpoints
    std::uint64_t runId = 0;     // a checkpoint of another run is not restored
    size_t offset = 0;           // of the shard: one of another shard is refused
  };

  // Restores the checkpoint at `options.path` into `shard` if it holds this run; throws IoError
  // when it cannot be restored.
  Checkpointer(Options options, Shard& shard, ServerObserver& observer);
  // Stops the periodic checkpoints.
  ~Checkpointer();

  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Writes the checkpoint (temporary file, fsync, rename), unless nothing changed since the
  // last one; throws IoError when it cannot.
  void write();

 private:
  void restore();
  void writePeriodically();

  const Options options_;
  Shard& shard_;
  ServerObserver& observer_;
  std::mutex writeMutex_;  // one writer of the file at a time
  std::uint64_t writtenStep_ = UINT64_MAX;
  std::mutex stopMutex_;
  std::condition_variable stopRequested_;
  bool stopping_ = false;
  std::thread periodic_;
};

}  // namespace pstrain::ps
