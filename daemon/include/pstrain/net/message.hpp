#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"
#include "pstrain/net/auth.hpp"

namespace pstrain::net {

// Every frame: magic "PSTR", protocol version, message type, payload length (little-endian),
// then the payload: the type's fixed fields, then for some types an array of float32 values.
constexpr std::uint32_t kMagic = 0x52545350;  // the bytes 'P' 'S' 'T' 'R'
// 4: params say whether ps 0 held them back; 5: a worker gives a ps that lost its shard its copy;
// 6: params say the worker's part of the training set
constexpr std::uint16_t kProtocolVersion = 6;
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
  std::uint32_t psCount;  // the ps the worker is configured for: told apart from other changes
  Nonce nonce;
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
};

struct Push {
  std::uint64_t localStep;
  float loss;
  std::uint32_t batch;  // examples behind weight gradients sent as factors (ps::PushEncoding)
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
};

// Sent right after a welcome at global step 0 by a worker that knew the ps at a later step: the
// ps lost its checkpoint. The values are the worker's copy of the shard, as at `globalStep`.
struct ShardCopy {
  std::uint64_t globalStep;
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
std::vector<std::uint8_t> encode(const StatusReply& message);
std::vector<std::uint8_t> encode(const Done& message);
std::vector<std::uint8_t> encode(const Challenge& message);
std::vector<std::uint8_t> encode(const Proof& message);

// Each decoder takes exactly the type's fixed fields and throws ProtocolError otherwise.
Hello decodeHello(const std::vector<std::uint8_t>& fields);
Welcome decodeWelcome(const std::vector<std::uint8_t>& fields);
Push decodePush(const std::vector<std::uint8_t>& fields);
Params decodeParams(const std::vector<std::uint8_t>& fields);
ShardCopy decodeShardCopy(const std::vector<std::uint8_t>& fields);
StatusReply decodeStatusReply(const std::vector<std::uint8_t>& fields);
Done decodeDone(const std::vector<std::uint8_t>& fields);
Challenge decodeChallenge(const std::vector<std::uint8_t>& fields);
Proof decodeProof(const std::vector<std::uint8_t>& fields);

}  // namespace pstrain::net
