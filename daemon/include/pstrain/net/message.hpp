#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"
#include "pstrain/net/auth.hpp"
#include "pstrain/net/limits.hpp"
#include "pstrain/net/wire_encoding.hpp"

namespace pstrain::net {

// Every frame: magic "PSTR", protocol version, message type, payload length (little-endian),
// then the payload: the type's fixed fields, then for some types an array of float32 values.
constexpr std::uint32_t kMagic = 0x52545350;  // the bytes 'P' 'S' 'T' 'R'
// 4: params say whether ps 0 held them back; 5: a worker gives a ps that lost its shard its copy;
// 6: params say the worker's part of the training set; 7: the ps are re-cut during a run
// (welcome says the cut, a hello no longer the ps count); 8: a push says whose it is (the client's
// incarnation and its push number) and its lag, a hello the step the worker knew; 9: pushes and
// answers say their wire encoding, and a hello the worker's; 10: a re-cut has two phases (worker
// 0 gives each ps its slice, then commits the cut), and a freeze answers with the slice the ps
// kept from the re-cut before as well; 11: and the slice of a re-cut that thawed uncommitted
constexpr std::uint16_t kProtocolVersion = 11;
constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxErrorText = 1024;

enum class MessageType : std::uint16_t {
  kHello = 1,        // worker -> ps: who I am, which model and run
  kWelcome = 2,      // ps -> worker: the shard it owns, the global step
  kPull = 3,         // worker -> ps: send me the shard's parameters
  kPush = 4,         // worker -> ps: gradients for the shard (float tail)
  kParams = 5,       // ps -> worker: the shard's parameters after the step (float tail)
  // 6 is retired (a status query; status is served over HTTP).
  kStatusReply = 7,  // ps -> worker: the answer to done
  kDone = 8,         // worker -> ps: I have finished; answered with kStatusReply
  kError = 9,        // either way: why the connection is refused (text tail), then close
  kChallenge = 10,   // ps -> worker: its nonce and its proof of the shared key
  kProof = 11,       // worker -> ps: its proof of the shared key
  kShardCopy = 12,   // worker -> ps: its copy of the shard, for a ps that lost it (float tail)
  kCutFreeze = 13,   // worker 0 -> ps: apply no more pushes, a re-cut begins; answered with
                     // kSliceState (one, or two: the one kept from the re-cut before)
  kSliceState = 14,  // ps -> worker 0 (what it serves) and worker 0 -> ps (what it is to serve
                     // once committed, answered with kStatusReply): a slice with its optimizer
                     // state (float tail)
  kRecut = 15,       // ps -> worker: the ps were re-cut; connect to those of the new cut
  kCutCommit = 16,   // worker 0 -> ps: every ps of the re-cut holds its slice: serve it;
                     // answered with kStatusReply
};

std::string messageName(MessageType type);

struct FrameHeader {
  MessageType type;
  std::uint32_t length;
};

using HeaderBytes = std::array<std::uint8_t, kHeaderSize>;

HeaderBytes encodeHeader(MessageType type, std::uint32_t length);

// Checks magic, version, type and that the length fits the type and `maxPayload`;
// throws ProtocolError saying which check failed.
FrameHeader decodeHeader(const HeaderBytes& bytes, std::uint32_t maxPayload);

// Size of a type's fixed fields, and whether a float array follows them.
size_t fixedFieldsSize(MessageType type);
// The bytes of fields that follow a checked header: the fixed fields (an error's whole text).
size_t fieldsSize(const FrameHeader& frame);
bool carriesValues(MessageType type);

struct Hello {
  Role role;
  std::uint32_t index;
  std::uint64_t parameterCount;
  std::uint64_t runId;  // fingerprint of the training configuration; must match the ps's
  // The global step this worker last had from this ps (0: none, it is new to the run): a ps
  // back at step 0 learns that the run is under way and does not wait for worker 0.
  std::uint64_t knownStep;
  Nonce nonce;
  // How its pushes go, and how it takes answers: a ps refuses a worker set otherwise.
  WireEncoding pushEncoding = WireEncoding::kFp32;
  WireEncoding pullEncoding = WireEncoding::kFp32;
};

struct Challenge {
  Nonce nonce;
  Digest proof;
};

struct Proof {
  Digest proof;
};

struct Welcome {
  std::uint64_t offset;
  std::uint64_t count;
  std::uint64_t globalStep;
  std::uint64_t trainSteps;
  std::uint32_t httpPort;  // where its /status answers; 0: none
  // The cut the ps serves: generation 0 as configured, each re-cut the next. The ps of a run
  // serve one generation, slices of one count that tile the parameters in ps order.
  std::uint64_t generation;
  std::uint32_t psCount;
};

struct Push {
  std::uint64_t localStep;
  float loss;
  std::uint32_t batch;  // examples behind weight gradients sent as factors (ps::PushEncoding)
  // Answers of this ps that the worker had not read when it computed the gradient (its pushes
  // in flight): the gradient is of the parameters the ps sent `lag` answers before its latest.
  std::uint32_t lag;
  // Which push it is, for the run's history: the sending ps::Client's random incarnation (a
  // restarted worker has another) and its count of pushes, 1 on; every ps gets the same number.
  std::uint64_t incarnation;
  std::uint64_t pushNumber;
  // Of the values: fp32, or a lossy encoding (net::WireEncoding) of the dense gradient.
  WireEncoding encoding = WireEncoding::kFp32;
};
struct Params {
  std::uint64_t globalStep;
  bool applied;  // the push this answers was applied (false once training has ended)
  bool done;     // the global step has reached trainSteps
  std::uint32_t serviceMicros;  // time the ps held the request: lock, optimizer, sync barrier
  // ps 0 held this answer until the worker could start its next step (ps::StepGate): the
  // parameters the other ps sent with it are older than these.
  bool held;
  // The worker's part of the training set: part `rank` of `workers`, one for each worker
  // connected to this ps now (ps::Membership). Workers join and leave during a run; ps 0's
  // answers say which part each one samples from.
  std::uint32_t rank;
  std::uint32_t workers;
  // fp32: the values are the shard's parameters. Otherwise they are the change since the
  // parameters of this connection's last answer, in that encoding, to add to them.
  WireEncoding encoding = WireEncoding::kFp32;
};

// Sent right after a welcome at global step 0 by a worker that knew the ps at a later step: the
// ps lost its checkpoint. The values are the worker's copy of the shard, as at `globalStep`.
struct ShardCopy {
  std::uint64_t globalStep;
};

// Worker 0 re-cuts the ps: it freezes each with the generation the re-cut makes.
struct CutFreeze {
  std::uint64_t generation;
};

// Worker 0 has given every ps of the re-cut to `generation` its slice: each serves it now.
struct CutCommit {
  std::uint64_t generation;
};

// A slice of the parameters with its optimizer state: what a frozen ps serves, and what worker 0
// gives each ps of the new cut. The values are `count` parameters, then `moments` arrays of
// `count` (ps::OptimizerState: Adam's first and second moments).
struct SliceState {
  std::uint64_t generation;
  std::uint32_t psCount;
  std::uint32_t index;  // of the ps in the cut
  std::uint64_t offset;
  std::uint64_t count;
  std::uint64_t globalStep;
  std::uint32_t moments;
  double scalars[2];  // the optimizer's (Adam: beta1 and beta2 to the power of its steps)
  std::uint32_t follows = 0;  // slice states that follow this one in the same answer
};
constexpr std::uint32_t kMaxMoments = 2;
// A freeze's answer: the slice served, then the one kept from the last re-cut committed and the
// one given by a re-cut that thawed (ps::Server::freeze).
constexpr std::uint32_t kMaxFollowingSlices = 2;

// The answer to a request made of a cut that has been replaced.
struct Recut {
  std::uint64_t generation;
  std::uint32_t psCount;
};

struct StatusReply {
  Role role;
  std::uint32_t index;
  std::uint64_t globalStep;
  bool done;
};

struct Done {
  std::uint64_t localSteps;
};

std::vector<std::uint8_t> encode(const Hello& message);
std::vector<std::uint8_t> encode(const Welcome& message);
std::vector<std::uint8_t> encode(const Push& message);
std::vector<std::uint8_t> encode(const Params& message);
std::vector<std::uint8_t> encode(const ShardCopy& message);
std::vector<std::uint8_t> encode(const CutFreeze& message);
std::vector<std::uint8_t> encode(const CutCommit& message);
std::vector<std::uint8_t> encode(const SliceState& message);
std::vector<std::uint8_t> encode(const Recut& message);
std::vector<std::uint8_t> encode(const StatusReply& message);
std::vector<std::uint8_t> encode(const Done& message);
std::vector<std::uint8_t> encode(const Challenge& message);
std::vector<std::uint8_t> encode(const Proof& message);

// Each decoder takes exactly the type's fixed fields and throws ProtocolError otherwise.
Hello decodeHello(const std::vector<std::uint8_t>& fields);
Welcome decodeWelcome(const std::vector<std::uint8_t>& fields);
// Also checks that the lag is below kMaxPushesInFlight.
Push decodePush(const std::vector<std::uint8_t>& fields);
Params decodeParams(const std::vector<std::uint8_t>& fields);
ShardCopy decodeShardCopy(const std::vector<std::uint8_t>& fields);
CutFreeze decodeCutFreeze(const std::vector<std::uint8_t>& fields);
CutCommit decodeCutCommit(const std::vector<std::uint8_t>& fields);
// Also checks that the slice lies within `parameterCount` and has at most kMaxMoments.
SliceState decodeSliceState(const std::vector<std::uint8_t>& fields, std::uint64_t parameterCount);
Recut decodeRecut(const std::vector<std::uint8_t>& fields);
StatusReply decodeStatusReply(const std::vector<std::uint8_t>& fields);
Done decodeDone(const std::vector<std::uint8_t>& fields);
Challenge decodeChallenge(const std::vector<std::uint8_t>& fields);
Proof decodeProof(const std::vector<std::uint8_t>& fields);

}  // namespace pstrain::net
