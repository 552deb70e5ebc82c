#include "pstrain/observe/history_recorder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "pstrain/common/bytes.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::observe {
namespace {

// A header's first four bytes are its magic; a record's are its kind and flags, never those.
bool startsHeader(const std::uint8_t* entry) {
  ByteReader in(entry, 4);
  return in.get<std::uint32_t>() == kHistoryMagic;
}

HistoryHeader decodeHeader(const std::uint8_t* entry) {
  ByteReader in(entry, kHistoryEntrySize);
  in.get<std::uint32_t>();  // the magic
  const auto version = in.get<std::uint16_t>();
  if (version != kHistoryVersion) {
    throw DecodeError("history version " + std::to_string(version) + " (this reads " +
                      std::to_string(kHistoryVersion) + ")");
  }
  HistoryHeader header;
  const auto role = in.get<std::uint8_t>();
  if (role > 1) throw DecodeError("a history of role " + std::to_string(role));
  header.role = role == 0 ? Role::kPs : Role::kWorker;
  header.sync = in.get<std::uint8_t>() != 0;
  header.index = in.get<std::uint32_t>();
  in.get<std::uint32_t>();  // reserved
  header.incarnation = in.get<std::uint64_t>();
  header.runId = in.get<std::uint64_t>();
  header.trainSteps = in.get<std::uint64_t>();
  header.startedAt = in.get<std::uint64_t>();
  header.parameterCount = in.get<std::uint64_t>();
  return header;
}

HistoryRecord decodeRecord(const std::uint8_t* entry) {
  ByteReader in(entry, kHistoryEntrySize);
  HistoryRecord record{HistoryKind(in.get<std::uint16_t>())};
  record.flags = in.get<std::uint16_t>();
  record.peer = in.get<std::uint32_t>();
  record.generation = in.get<std::uint64_t>();
  record.globalStep = in.get<std::uint64_t>();
  record.incarnation = in.get<std::uint64_t>();
  record.pushNumber = in.get<std::uint64_t>();
  record.value = in.get<std::uint64_t>();
  record.offset = in.get<std::uint64_t>();
  record.count = in.get<std::uint64_t>();
  record.checksum = in.get<std::uint64_t>();
  return record;
}

}  // namespace

std::string historyKindName(HistoryKind kind) {
  switch (kind) {
    case HistoryKind::kPushSent: return "push-sent";
    case HistoryKind::kAnswered: return "answered";
    case HistoryKind::kRecut: return "recut";
    case HistoryKind::kServing: return "serving";
    case HistoryKind::kPushApplied: return "push-applied";
    case HistoryKind::kPushRefused: return "push-refused";
    case HistoryKind::kPullAnswered: return "pull-answered";
    case HistoryKind::kWorkerJoined: return "worker-joined";
    case HistoryKind::kWorkerLeft: return "worker-left";
    case HistoryKind::kCutInstalled: return "cut-installed";
    case HistoryKind::kCutFrozen: return "cut-frozen";
    case HistoryKind::kCutThawed: return "cut-thawed";
    case HistoryKind::kRestored: return "restored";
    case HistoryKind::kCheckpointWritten: return "checkpoint-written";
    case HistoryKind::kShardRecovered: return "shard-recovered";
  }
  return "kind " + std::to_string(int(kind));
}

std::vector<std::uint8_t> encodeHistoryHeader(const HistoryHeader& h) {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  out.put(kHistoryMagic).put(kHistoryVersion).put(std::uint8_t(h.role == Role::kPs ? 0 : 1));
  out.put(std::uint8_t(h.sync)).put(h.index).put(std::uint32_t(0)).put(h.incarnation);
  out.put(h.runId).put(h.trainSteps).put(h.startedAt).put(h.parameterCount);
  out.put(std::uint64_t(0)).put(std::uint64_t(0));
  return bytes;
}

std::vector<std::uint8_t> encodeHistoryRecord(const HistoryRecord& r) {
  std::vector<std::uint8_t> bytes;
  ByteWriter out(bytes);
  out.put(std::uint16_t(r.kind)).put(r.flags).put(r.peer).put(r.generation).put(r.globalStep);
  out.put(r.incarnation).put(r.pushNumber).put(r.value).put(r.offset).put(r.count);
  out.put(r.checksum);
  return bytes;
}

std::vector<HistorySegment> decodeHistory(const std::vector<std::uint8_t>& bytes) {
  std::vector<HistorySegment> segments;
  const size_t whole = bytes.size() / kHistoryEntrySize;
  for (size_t i = 0; i < whole; ++i) {
    const std::uint8_t* entry = bytes.data() + i * kHistoryEntrySize;
    if (startsHeader(entry)) {
      segments.push_back({decodeHeader(entry), {}});
    } else if (segments.empty()) {
      throw DecodeError("not a history: it does not start with a header");
    } else {
      segments.back().records.push_back(decodeRecord(entry));
    }
  }
  return segments;
}

std::vector<HistorySegment> readHistory(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw IoError("cannot read " + path);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  try {
    return decodeHistory(bytes);
  } catch (const DecodeError& e) {
    throw IoError(path + ": " + e.what());
  }
}

std::uint64_t historyPathHash(const std::string& path) {
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (unsigned char ch : path) hash = (hash ^ ch) * 0x100000001b3u;
  return hash;
}

HistoryRecorder::HistoryRecorder(const std::string& path, const HistoryHeader& header)
    : path_(path), header_(header) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throwWriteError("cannot open " + path + ": " + std::strerror(errno), errno);
  const auto bytes = encodeHistoryHeader(header);
  const auto written = ::write(fd_, bytes.data(), bytes.size());
  if (written != ssize_t(bytes.size())) {
    int error = written < 0 ? errno : ENOSPC;  // short: no room for the rest
    // Entries are of one size: a part of a header would shift every later one.
    if (written > 0 && ::ftruncate(fd_, ::lseek(fd_, 0, SEEK_END) - written) != 0) error = errno;
    ::close(fd_);
    throwWriteError("cannot write " + path + ": " + std::strerror(error), error);
  }
  end_ = ::lseek(fd_, 0, SEEK_END);
  reserve();
}

HistoryRecorder::~HistoryRecorder() {
  writeWaiting();
  ::close(fd_);
}

void HistoryRecorder::record(const HistoryRecord& record) {
  const auto bytes = encodeHistoryRecord(record);
  std::lock_guard<std::mutex> lock(mutex_);
  if (waiting_.size() + bytes.size() > kMaxWaitingBytes) {
    if (!dropped_) {
      log::logger(roleName(header_.role))
          ->error("The run's history in {} is incomplete from now on: the disk has had no room "
                  "for {} MB of its records",
                  path_, kMaxWaitingBytes >> 20);
    }
    dropped_ = true;
    return;
  }
  waiting_.insert(waiting_.end(), bytes.begin(), bytes.end());
  writeWaiting();
}

void HistoryRecorder::reserve() {
  if (reserved_ - end_ >= kReserveBytes / 2) return;
  // Blocks allocated, the size unchanged: appends land in them however full the disk gets.
  if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, end_, kReserveBytes) == 0) {
    reserved_ = end_ + kReserveBytes;
  }
}

void HistoryRecorder::writeWaiting() {
  size_t written = 0;
  while (written < waiting_.size()) {
    const auto n = ::write(fd_, waiting_.data() + written, waiting_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // no room: the rest, a record's tail included, waits for the next
    written += size_t(n);
  }
  waiting_.erase(waiting_.begin(), waiting_.begin() + long(written));
  end_ += off_t(written);
  reserve();
}

}  // namespace pstrain::observe
