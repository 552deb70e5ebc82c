#include "pstrain/net/message.hpp"

#include <cstring>

#include "pstrain/common/error.hpp"
#include "pstrain/common/bytes.hpp"

namespace pstrain::net {
namespace {


template <typename Bytes>
void putBytes(ByteWriter& w, const Bytes& bytes) {
  for (auto byte : bytes) w.put(byte);
}

template <typename Bytes>
Bytes getBytes(ByteReader& r) {
  Bytes bytes;
  for (auto& byte : bytes) byte = r.get<std::uint8_t>();
  return bytes;
}

std::uint8_t roleByte(Role role) { return role == Role::kPs ? 0 : 1; }

Role roleFromByte(std::uint8_t value) {
  if (value > 1) throw ProtocolError("unknown role " + std::to_string(value));
  return value == 0 ? Role::kPs : Role::kWorker;
}

bool flagFromByte(std::uint8_t value) {
  if (value > 1) throw ProtocolError("flag byte " + std::to_string(value) + " is not 0 or 1");
  return value == 1;
}

template <typename Fill>
std::vector<std::uint8_t> fields(Fill fill) {
  std::vector<std::uint8_t> bytes;
  ByteWriter writer(bytes);
  fill(writer);
  return bytes;
}

template <typename Read>
auto decodeExactly(const std::vector<std::uint8_t>& bytes, Read read) {
  try {
    ByteReader reader(bytes.data(), bytes.size());
    auto message = read(reader);
    reader.expectEnd();
    return message;
  } catch (const DecodeError& e) {
    throw ProtocolError(std::string("message ") + e.what());  // bytes from a peer
  }
}

}  // namespace

namespace {

// What the wire knows of each message type. The fixed sizes are those of the encoders' output,
// so a field added to a message changes its size here too.
struct TypeInfo {
  MessageType type;
  const char* name;
  size_t fixedSize;     // of the fields before any float tail (or error text)
  bool carriesValues;   // a float32 tail follows the fixed fields
};

const std::vector<TypeInfo>& typeTable() {
  static const std::vector<TypeInfo> table{
      {MessageType::kHello, "hello", encode(Hello{}).size(), false},
      {MessageType::kWelcome, "welcome", encode(Welcome{}).size(), false},
      {MessageType::kPull, "pull", 0, false},
      {MessageType::kPush, "push", encode(Push{}).size(), true},
      {MessageType::kParams, "params", encode(Params{}).size(), true},
      {MessageType::kStatusReply, "status-reply", encode(StatusReply{}).size(), false},
      {MessageType::kDone, "done", encode(Done{}).size(), false},
      {MessageType::kError, "error", 0, false},
      {MessageType::kChallenge, "challenge", encode(Challenge{}).size(), false},
      {MessageType::kProof, "proof", encode(Proof{}).size(), false},
      {MessageType::kShardCopy, "shard-copy", encode(ShardCopy{}).size(), true},
      {MessageType::kCutFreeze, "cut-freeze", encode(CutFreeze{}).size(), false},
      {MessageType::kSliceState, "slice-state", encode(SliceState{}).size(), true},
      {MessageType::kRecut, "recut", encode(Recut{}).size(), false},
      {MessageType::kCutCommit, "cut-commit", encode(CutCommit{}).size(), false},
  };
  return table;
}

const TypeInfo* findType(std::uint16_t raw) {
  for (const auto& info : typeTable()) {
    if (static_cast<std::uint16_t>(info.type) == raw) return &info;
  }
  return nullptr;
}

const TypeInfo& typeInfo(MessageType type) {
  return *findType(static_cast<std::uint16_t>(type));  // every enumerator is in the table
}

bool isKnown(std::uint16_t type) { return findType(type) != nullptr; }

}  // namespace

std::string messageName(MessageType type) {
  if (const auto* info = findType(static_cast<std::uint16_t>(type))) return info->name;
  return "type " + std::to_string(static_cast<int>(type));
}

size_t fixedFieldsSize(MessageType type) { return typeInfo(type).fixedSize; }

size_t fieldsSize(const FrameHeader& frame) {
  return frame.type == MessageType::kError ? frame.length : fixedFieldsSize(frame.type);
}

bool carriesValues(MessageType type) { return typeInfo(type).carriesValues; }

HeaderBytes encodeHeader(MessageType type, std::uint32_t length) {
  std::vector<std::uint8_t> bytes;
  ByteWriter(bytes)
      .put(kMagic)
      .put(kProtocolVersion)
      .put(static_cast<std::uint16_t>(type))
      .put(length);
  HeaderBytes header;
  std::memcpy(header.data(), bytes.data(), kHeaderSize);
  return header;
}

FrameHeader decodeHeader(const HeaderBytes& bytes, std::uint32_t maxPayload) {
  ByteReader reader(bytes.data(), bytes.size());
  if (reader.get<std::uint32_t>() != kMagic) throw ProtocolError("bad magic: not a pstrain frame");
  auto version = reader.get<std::uint16_t>();
  if (version != kProtocolVersion) {
    throw ProtocolError("the peer speaks protocol version " + std::to_string(version) +
                        ", this pstrain " + std::to_string(kProtocolVersion) +
                        ": every ps and worker of a run must run the same release");
  }
  auto rawType = reader.get<std::uint16_t>();
  if (!isKnown(rawType)) throw ProtocolError("unknown message type " + std::to_string(rawType));
  auto type = static_cast<MessageType>(rawType);
  auto length = reader.get<std::uint32_t>();
  auto fixed = fixedFieldsSize(type);
  bool fits = type == MessageType::kError ? length <= kMaxErrorText
              : carriesValues(type)
                  ? length >= fixed && (length - fixed) % sizeof(float) == 0 && length <= maxPayload
                  : length == fixed;
  if (!fits) {
    throw ProtocolError(messageName(type) + " frame of " + std::to_string(length) +
                        " bytes has an invalid length");
  }
  return FrameHeader{type, length};
}

std::vector<std::uint8_t> encode(const Hello& m) {
  return fields([&](ByteWriter& w) {
    w.put(roleByte(m.role)).put(m.index).put(m.parameterCount).put(m.runId).put(m.knownStep);
    putBytes(w, m.nonce);
    w.put(std::uint8_t(m.pushEncoding)).put(std::uint8_t(m.pullEncoding));
  });
}

std::vector<std::uint8_t> encode(const Welcome& m) {
  return fields(
      [&](ByteWriter& w) {
        w.put(m.offset).put(m.count).put(m.globalStep).put(m.trainSteps).put(m.httpPort);
        w.put(m.generation).put(m.psCount);
      });
}

std::vector<std::uint8_t> encode(const Push& m) {
  return fields([&](ByteWriter& w) {
    w.put(m.localStep).put(m.loss).put(m.batch).put(m.lag).put(m.incarnation).put(m.pushNumber);
    w.put(std::uint8_t(m.encoding));
  });
}

std::vector<std::uint8_t> encode(const Params& m) {
  return fields([&](ByteWriter& w) {
    w.put(m.globalStep).put(std::uint8_t(m.applied)).put(std::uint8_t(m.done)).put(m.serviceMicros);
    w.put(std::uint8_t(m.held)).put(m.rank).put(m.workers).put(std::uint8_t(m.encoding));
  });
}

std::vector<std::uint8_t> encode(const ShardCopy& m) {
  return fields([&](ByteWriter& w) { w.put(m.globalStep); });
}

std::vector<std::uint8_t> encode(const CutFreeze& m) {
  return fields([&](ByteWriter& w) { w.put(m.generation); });
}

std::vector<std::uint8_t> encode(const CutCommit& m) {
  return fields([&](ByteWriter& w) { w.put(m.generation); });
}

std::vector<std::uint8_t> encode(const SliceState& m) {
  return fields([&](ByteWriter& w) {
    w.put(m.generation).put(m.psCount).put(m.index).put(m.offset).put(m.count).put(m.globalStep);
    w.put(m.moments).put(m.scalars[0]).put(m.scalars[1]).put(m.follows);
  });
}

std::vector<std::uint8_t> encode(const Recut& m) {
  return fields([&](ByteWriter& w) { w.put(m.generation).put(m.psCount); });
}

std::vector<std::uint8_t> encode(const StatusReply& m) {
  return fields([&](ByteWriter& w) {
    w.put(roleByte(m.role)).put(m.index).put(m.globalStep).put(std::uint8_t(m.done));
  });
}

std::vector<std::uint8_t> encode(const Done& m) {
  return fields([&](ByteWriter& w) { w.put(m.localSteps); });
}

Hello decodeHello(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto role = roleFromByte(r.get<std::uint8_t>());
    auto index = r.get<std::uint32_t>();
    auto parameterCount = r.get<std::uint64_t>();
    auto runId = r.get<std::uint64_t>();
    auto knownStep = r.get<std::uint64_t>();
    auto nonce = getBytes<Nonce>(r);
    auto pushEncoding = wireEncodingFromByte(r.get<std::uint8_t>());
    auto pullEncoding = wireEncodingFromByte(r.get<std::uint8_t>());
    return Hello{role, index, parameterCount, runId, knownStep, nonce, pushEncoding, pullEncoding};
  });
}

std::vector<std::uint8_t> encode(const Challenge& m) {
  return fields([&](ByteWriter& w) {
    putBytes(w, m.nonce);
    putBytes(w, m.proof);
  });
}

std::vector<std::uint8_t> encode(const Proof& m) {
  return fields([&](ByteWriter& w) { putBytes(w, m.proof); });
}

Challenge decodeChallenge(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto nonce = getBytes<Nonce>(r);
    return Challenge{nonce, getBytes<Digest>(r)};
  });
}

Proof decodeProof(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) { return Proof{getBytes<Digest>(r)}; });
}

Welcome decodeWelcome(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto offset = r.get<std::uint64_t>();
    auto count = r.get<std::uint64_t>();
    auto globalStep = r.get<std::uint64_t>();
    auto trainSteps = r.get<std::uint64_t>();
    auto httpPort = r.get<std::uint32_t>();
    auto generation = r.get<std::uint64_t>();
    auto psCount = r.get<std::uint32_t>();
    if (psCount == 0) throw ProtocolError("a welcome to a cut of 0 ps");
    return Welcome{offset, count, globalStep, trainSteps, httpPort, generation, psCount};
  });
}

Push decodePush(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto localStep = r.get<std::uint64_t>();
    auto loss = r.get<float>();
    auto batch = r.get<std::uint32_t>();
    auto lag = r.get<std::uint32_t>();
    if (lag >= kMaxPushesInFlight) {
      throw ProtocolError("a push computed " + std::to_string(lag) + " answers back; at most " +
                          std::to_string(kMaxPushesInFlight - 1) + " are in flight");
    }
    auto incarnation = r.get<std::uint64_t>();
    auto pushNumber = r.get<std::uint64_t>();
    auto encoding = wireEncodingFromByte(r.get<std::uint8_t>());
    if (encoding != WireEncoding::kFp32 && batch != 0) {
      throw ProtocolError("a push of gradient factors (batch " + std::to_string(batch) +
                          ") encoded " + encodingName(encoding) + ": factors go as fp32");
    }
    return Push{localStep, loss, batch, lag, incarnation, pushNumber, encoding};
  });
}

Params decodeParams(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto globalStep = r.get<std::uint64_t>();
    auto applied = flagFromByte(r.get<std::uint8_t>());
    auto done = flagFromByte(r.get<std::uint8_t>());
    auto serviceMicros = r.get<std::uint32_t>();
    auto held = flagFromByte(r.get<std::uint8_t>());
    auto rank = r.get<std::uint32_t>();
    auto workers = r.get<std::uint32_t>();
    if (rank >= workers) {
      throw ProtocolError("params for part " + std::to_string(rank) + " of " +
                          std::to_string(workers) + " of the training set");
    }
    auto encoding = wireEncodingFromByte(r.get<std::uint8_t>());
    return Params{globalStep, applied, done, serviceMicros, held, rank, workers, encoding};
  });
}

ShardCopy decodeShardCopy(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) { return ShardCopy{r.get<std::uint64_t>()}; });
}

CutFreeze decodeCutFreeze(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) { return CutFreeze{r.get<std::uint64_t>()}; });
}

CutCommit decodeCutCommit(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) { return CutCommit{r.get<std::uint64_t>()}; });
}

SliceState decodeSliceState(const std::vector<std::uint8_t>& bytes,
                            std::uint64_t parameterCount) {
  return decodeExactly(bytes, [&](ByteReader& r) {
    SliceState m{};
    m.generation = r.get<std::uint64_t>();
    m.psCount = r.get<std::uint32_t>();
    m.index = r.get<std::uint32_t>();
    m.offset = r.get<std::uint64_t>();
    m.count = r.get<std::uint64_t>();
    m.globalStep = r.get<std::uint64_t>();
    m.moments = r.get<std::uint32_t>();
    m.scalars[0] = r.get<double>();
    m.scalars[1] = r.get<double>();
    m.follows = r.get<std::uint32_t>();
    if (m.follows > kMaxFollowingSlices || m.index >= m.psCount || m.moments > kMaxMoments ||
        m.offset > parameterCount || m.count > parameterCount - m.offset) {
      throw ProtocolError("a slice state of ps " + std::to_string(m.index) + " of " +
                          std::to_string(m.psCount) + ", parameters [" + std::to_string(m.offset) +
                          ", +" + std::to_string(m.count) + ") with " +
                          std::to_string(m.moments) + " moments, followed by " +
                          std::to_string(m.follows) + " more, in a model of " +
                          std::to_string(parameterCount));
    }
    return m;
  });
}

Recut decodeRecut(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto generation = r.get<std::uint64_t>();
    return Recut{generation, r.get<std::uint32_t>()};
  });
}

StatusReply decodeStatusReply(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto role = roleFromByte(r.get<std::uint8_t>());
    auto index = r.get<std::uint32_t>();
    auto globalStep = r.get<std::uint64_t>();
    return StatusReply{role, index, globalStep, flagFromByte(r.get<std::uint8_t>())};
  });
}

Done decodeDone(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) { return Done{r.get<std::uint64_t>()}; });
}

}  // namespace pstrain::net
