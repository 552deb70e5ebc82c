#include "pstrain/ps/checkpointer.hpp"

#include <filesystem>
#include <fstream>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/ps/checkpoint.hpp"

namespace pstrain::ps {

Checkpointer::Checkpointer(Options options, Shard& shard, ServerObserver& observer)
    : options_(std::move(options)), shard_(shard), observer_(observer) {
  periodic_ = std::thread([this] { writePeriodically(); });
}

Checkpointer::~Checkpointer() { stop(); }

void Checkpointer::stop() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  stopRequested_.notify_all();
  if (periodic_.joinable()) periodic_.join();
}

std::optional<Checkpoint> Checkpointer::read(const std::string& path, std::uint64_t runId,
                                             ServerObserver& observer) {
  if (path.empty()) return std::nullopt;
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  Checkpoint checkpoint;
  try {
    checkpoint = decodeCheckpoint(bytes);
  } catch (const DecodeError& e) {
    throw IoError("checkpoint " + path + " cannot be restored (" + e.what() +
                  "); move it away to start this run over");
  }
  if (checkpoint.runId != runId) {
    observer.checkpointIgnored(path, checkpoint.runId, runId);
    return std::nullopt;
  }
  return checkpoint;
}

void Checkpointer::restore(const Checkpoint& checkpoint) {
  try {
    if (!(checkpoint.cut == options_.cut)) throw DecodeError("it holds another shard");
    shard_.restore(checkpoint.globalStep, checkpoint.shard);
  } catch (const DecodeError& e) {
    throw IoError("checkpoint " + options_.path + " cannot be restored (" + e.what() +
                  "); move it away to start this run over");
  }
  auto state = shard_.state();
  writtenStep_ = state.globalStep;
  observer_.restored(ServerObserver::SliceValues::of(options_.cut, shard_.checksum()),
                     state.globalStep, options_.path, state.done);
}

void Checkpointer::write() {
  if (options_.path.empty()) return;
  std::lock_guard<std::mutex> lock(writeMutex_);
  auto snapshot = shard_.serialize();
  const auto step = snapshot.globalStep;
  const auto written = ServerObserver::SliceValues::of(options_.cut, snapshot.checksum);
  if (step == writtenStep_) return;
  auto bytes =
      encodeCheckpoint(Checkpoint{options_.runId, options_.cut, step, std::move(snapshot.bytes)});
  std::error_code failed;
  std::filesystem::create_directories(std::filesystem::path(options_.path).parent_path(), failed);
  if (failed) throw IoError("cannot write " + options_.path + ": " + failed.message());
  writeFileAtomically(options_.path, std::string(bytes.begin(), bytes.end()),
                      "checkpoint.before-rename");
  writtenStep_ = step;
  observer_.checkpointWritten(written, step, options_.path);
}

void Checkpointer::writePeriodically() {
  if (options_.everySeconds <= 0) return;
  const auto period = std::chrono::duration<double>(options_.everySeconds);
  std::unique_lock<std::mutex> lock(stopMutex_);
  while (!stopRequested_.wait_for(lock, period, [this] { return stopping_; })) {
    writeOrReport();
  }
}

bool Checkpointer::writeOrReport() {
  try {
    write();
    return true;
  } catch (const IoError& e) {
    observer_.checkpointFailed(e.what());
    return false;
  }
}

}  // namespace pstrain::ps
