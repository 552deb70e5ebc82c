#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"

namespace pstrain::observe {

// The run's history: what each ps and worker did, one fixed-size binary record per operation,
// so that a run can be checked afterwards (tests/support/history_checker). This header is the
// one home of the file format.
//
// A file (`<logDir>/history.bin` of `pstrain run` with recordHistory) is one or more segments,
// each a header followed by records, every one kHistoryEntrySize bytes, little-endian:
//
//   header   magic u32 ("PSTH"), version u16, role u8 (0 ps, 1 worker), sync u8, index u32,
//            reserved u32, incarnation u64, runId u64, trainSteps u64, startedAt u64 (Unix µs),
//            parameterCount u64, reserved u64, reserved u64
//   record   kind u16, flags u16, peer u32, generation u64, globalStep u64, incarnation u64,
//            pushNumber u64, value u64, offset u64, count u64, checksum u64
//
// A process that opens a file that holds a history already (a restarted child of `pstrain
// local`) appends a segment of its own. The incarnation of a worker's segment is its ps::Client's,
// the one its pushes carry; a ps draws its own. What each record kind's fields hold:
//
//   kind              by      peer       generation  globalStep            other
//   push-sent         worker  -          of the cut  its gradient's base   pushNumber; value:
//                                                                          the local step
//   answered          worker  ps (cut)   of the cut  of the answer         pushNumber (0: a
//                                                                          pull); flags: applied
//   recut             worker  ps count   the new     the run's, where the  value: parameters
//                     0       of the     cut's       re-cut took it        whose optimizer state
//                             new cut                                      started again (lost
//                                                                          state); flags: a ps
//                                                                          was unreached
//   serving           ps      its index  of the cut  it starts from        value: ps count;
//                             in the cut                                   flags: completed,
//                                                                          out of the run
//   push-applied      ps      worker     of the cut  the step it went into incarnation,
//                                                                          pushNumber; value:
//                                                                          staleness; flags:
//                                                                          closed its step,
//                                                                          the push's lag
//   push-refused      ps      worker     of the cut  the shard's           incarnation,
//                                                                          pushNumber; flags:
//                                                                          why (ps::Server-
//                                                                          Observer::Refusal)
//   pull-answered     ps      -          -           of the answer
//   worker-joined     ps      worker     -           at its welcome
//   worker-left       ps      worker     -           -
//   cut-installed     ps      its index  of the cut  the slice's           value: ps count;
//                                                                          flags: out of the
//                                                                          run; slice
//   cut-frozen        ps      -          the re-cut's  the shard's         value: the generation
//                                                                          of the cut frozen;
//                                                                          slice
//   cut-thawed        ps      -          of the cut  the shard's           slice
//   restored          ps      -          of the cut  the checkpoint's      value: path hash;
//                                                                          flags: completed;
//                                                                          slice
//   checkpoint-written ps     -          of the cut  the checkpoint's      value: path hash;
//                                                                          slice
//   shard-recovered   ps      worker     of the cut  the copy's            slice
//
// "slice": offset and count place the slice's values in the parameter vector, and checksum is
// their checksum (common/value_checksum.hpp): the sum, mod 2^64, over the parameters and each
// optimizer moment of the slice, of splitmix64's finaliser applied to (global index << 35 |
// array << 32 | the value's IEEE-754 bits), array 0 the parameters, 1 on each moment. It adds up
// over disjoint ranges, so slices cut differently compare: the slices a re-cut froze against
// those it installed, a restore against the checkpoint written. Other records' offset, count and
// checksum are 0.
//
// A record is one write(2) to a file opened O_APPEND: a process killed with -9 loses nothing it
// recorded, and records of concurrent threads never interleave. Records of concurrent pushes are
// in the order their threads wrote them, not the order of their steps. The cost is a system call
// a record, measured once with a loop of 10^6 records to a file on ext4: 1.1 µs each. A push makes
// five (the worker's push-sent and two answers, each of 2 ps's push-applied): about 6 µs against
// the 2.5 ms of a global step of `pstrain local` with 2 ps and 2 workers, 0.2 %.
constexpr std::uint32_t kHistoryMagic = 0x48545350;  // the bytes 'P' 'S' 'T' 'H'
constexpr std::uint16_t kHistoryVersion = 2;
constexpr size_t kHistoryEntrySize = 72;
constexpr const char* kHistoryFile = "history.bin";

struct HistoryHeader {
  Role role = Role::kPs;
  bool sync = false;
  std::uint32_t index = 0;
  std::uint64_t incarnation = 0;
  std::uint64_t runId = 0;
  std::uint64_t trainSteps = 0;
  std::uint64_t startedAt = 0;  // Unix µs: orders the incarnations of one ps
  std::uint64_t parameterCount = 0;  // of the run's model
};

enum class HistoryKind : std::uint16_t {
  kPushSent = 1,
  kAnswered = 2,
  kRecut = 3,
  kServing = 10,
  kPushApplied = 11,
  kPushRefused = 12,
  kPullAnswered = 13,
  kWorkerJoined = 14,
  kWorkerLeft = 15,
  kCutInstalled = 16,
  kCutFrozen = 17,
  kCutThawed = 18,
  kRestored = 19,
  kCheckpointWritten = 20,
  kShardRecovered = 21,
};

std::string historyKindName(HistoryKind kind);

struct HistoryRecord {
  HistoryKind kind;
  std::uint16_t flags = 0;
  std::uint32_t peer = 0;
  std::uint64_t generation = 0;
  std::uint64_t globalStep = 0;
  std::uint64_t incarnation = 0;
  std::uint64_t pushNumber = 0;
  std::uint64_t value = 0;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};
// Flags: the yes or no of a record that has one (applied, completed, closed its step), and of a
// cut, that the ps serves no parameters of it (it is out of the run). A push-applied record's
// flags also hold the push's lag (net::Push, below 16) from bit kHistoryLagShift on.
constexpr std::uint16_t kHistoryYes = 1;
constexpr std::uint16_t kHistoryOutOfRun = 2;
constexpr int kHistoryLagShift = 8;
constexpr std::uint16_t historyFlag(bool yes) { return yes ? kHistoryYes : 0; }

// One process's history in a file: its header and its records, in the order written.
struct HistorySegment {
  HistoryHeader header;
  std::vector<HistoryRecord> records;
};

std::vector<std::uint8_t> encodeHistoryHeader(const HistoryHeader& header);
std::vector<std::uint8_t> encodeHistoryRecord(const HistoryRecord& record);
// Every segment of a history file's bytes, up to the last whole entry (a file cut short is read
// as far as it goes); throws DecodeError where it does not start with a header of this version.
std::vector<HistorySegment> decodeHistory(const std::vector<std::uint8_t>& bytes);
// The same of a file; throws IoError where it cannot be read.
std::vector<HistorySegment> readHistory(const std::string& path);

// A path in a record: a 64-bit FNV-1a hash of it.
std::uint64_t historyPathHash(const std::string& path);

// Appends one process's history to a file: its header at once, then a record at a time.
// Thread-safe.
class HistoryRecorder {
 public:
  // Throws IoError where the file cannot be opened or written.
  HistoryRecorder(const std::string& path, const HistoryHeader& header);
  ~HistoryRecorder();
  HistoryRecorder(const HistoryRecorder&) = delete;
  HistoryRecorder& operator=(const HistoryRecorder&) = delete;

  const HistoryHeader& header() const { return header_; }
  // Appends `record`. The file keeps kReserveBytes of disk allocated beyond its end, so a full
  // disk does not stop it at once; a record the disk refuses even so waits in memory (up to
  // kMaxWaitingBytes, beyond which records are dropped and that is logged) and goes out, whole
  // and in order, with the next one once there is room.
  void record(const HistoryRecord& record);

  static constexpr off_t kReserveBytes = 8 << 20;  // about 95,000 records
  static constexpr size_t kMaxWaitingBytes = 64 << 20;

 private:
  void reserve();
  void writeWaiting();

  const std::string path_;
  const HistoryHeader header_;
  std::mutex mutex_;
  int fd_ = -1;
  off_t end_ = 0;       // of what has been written
  off_t reserved_ = 0;  // where the disk allocated for the file ends
  std::vector<std::uint8_t> waiting_;
  bool dropped_ = false;
};

}  // namespace pstrain::observe
