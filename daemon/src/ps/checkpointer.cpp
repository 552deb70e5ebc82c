#include "pstrain/ps/checkpointer.hpp"

#include <filesystem>
#include <fstream>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/ps/checkpoint.hpp"

namespace pstrain::ps {

Checkpointer::Checkpointer(Options options, Shard& shard, ServerObserver& observer)
    : options_(std::move(options)), shard_(shard), observer_(observer) {
  restore();
  periodic_ = std::thread([this] { writePeriodically(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  stopRequested_.notify_all();
  periodic_.join();
}

void Checkpointer::restore() {
  if (options_.path.empty()) return;
  std::ifstream file(options_.path, std::ios::binary);
  if (!file) return;
  auto logger = log::logger("ps");
  const auto& path = options_.path;
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  try {
    auto checkpoint = decodeCheckpoint(bytes);
    if (checkpoint.runId != options_.runId) {
      logger->info("PS {}: {} belongs to another run ({}); starting run {}", options_.index, path,
                   checkpoint.runId, options_.runId);
      return;
    }
    if (checkpoint.offset != options_.offset) throw DecodeError("it holds another shard");
    shard_.restore(checkpoint.globalStep, checkpoint.shard);
  } catch (const DecodeError& e) {
    throw IoError("checkpoint " + path + " cannot be restored (" + e.what() +
                  "); move it away to start this run over");
  }
  auto state = shard_.state();
  writtenStep_ = state.globalStep;
  observer_.restored(state.globalStep, path, state.done);
}

void Checkpointer::write() {
  if (options_.path.empty()) return;
  std::lock_guard<std::mutex> lock(writeMutex_);
  auto snapshot = shard_.serialize();
  const auto step = snapshot.globalStep;
  if (step == writtenStep_) return;
  auto bytes =
      encodeCheckpoint(Checkpoint{options_.runId, options_.offset, step, std::move(snapshot.bytes)});
  std::error_code failed;
  std::filesystem::create_directories(std::filesystem::path(options_.path).parent_path(), failed);
  if (failed) throw IoError("cannot write " + options_.path + ": " + failed.message());
  writeFileAtomically(options_.path, std::string(bytes.begin(), bytes.end()));
  writtenStep_ = step;
  observer_.checkpointWritten(step, options_.path);
}

void Checkpointer::writePeriodically() {
  if (options_.everySeconds <= 0) return;
  const auto period = std::chrono::duration<double>(options_.everySeconds);
  std::unique_lock<std::mutex> lock(stopMutex_);
  while (!stopRequested_.wait_for(lock, period, [this] { return stopping_; })) {
    try {
      write();
    } catch (const IoError& e) {
      log::logger("ps")->error("PS {}: {}", options_.index, e.what());
    }
  }
}

}  // namespace pstrain::ps
