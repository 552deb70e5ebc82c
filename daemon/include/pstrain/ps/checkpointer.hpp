#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "pstrain/ps/checkpoint.hpp"
#include "pstrain/ps/cut_position.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// A ps's checkpoints of the shard of one cut: writes one every `everySeconds` on a thread of its
// own, and whenever write() is called (the last step, SIGTERM, a re-cut). A checkpoint is the
// cut, the shard, its optimizer state and the global step.
class Checkpointer {
 public:
  struct Options {
    std::string path;            // "" for none
    double everySeconds = 0;     // 0: no periodic checkpoints
    std::uint64_t runId = 0;
    CutPosition cut;             // of the shard
  };

  // The checkpoint at `path` if it holds run `runId` (one of another run is told to `observer`
  // and left); throws IoError when it cannot be read.
  static std::optional<Checkpoint> read(const std::string& path, std::uint64_t runId,
                                        ServerObserver& observer);

  Checkpointer(Options options, Shard& shard, ServerObserver& observer);
  // Stops the periodic checkpoints.
  ~Checkpointer();

  // Restores `checkpoint` (read()) into the shard; throws IoError when it does not fit it.
  void restore(const Checkpoint& checkpoint);
  // Writes no more periodic checkpoints.
  void stop();

  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Writes the checkpoint (temporary file, fsync, rename), unless nothing changed since the
  // last one; throws IoError when it cannot.
  void write();
  // write(), where one that cannot be written (a full disk) is told to the observer and the
  // last one written stays: the periodic checkpoints, the last step's and SIGTERM's. Returns
  // whether it was written.
  bool writeOrReport();

 private:
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
