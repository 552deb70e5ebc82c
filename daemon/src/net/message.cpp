#include "pstrain/net/message.hpp"

#include <cstring>

#include "pstrain/common/error.hpp"
#include "pstrain/common/bytes.hpp"

namespace pstrain::net {
namespace {

bool isKnown(std::uint16_t type) { return type >= 1 && type <= 11 && type != 6; }

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

std::uint8_t roleByte(config::Role role) { return role == config::Role::kPs ? 0 : 1; }

config::Role roleFromByte(std::uint8_t value) {
  if (value > 1) throw ProtocolError("unknown role " + std::to_string(value));
  return value == 0 ? config::Role::kPs : config::Role::kWorker;
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
  ByteReader reader(bytes.data(), bytes.size());
  auto message = read(reader);
  reader.expectEnd();
  return message;
}

}  // namespace

std::string messageName(MessageType type) {
  switch (type) {
    case MessageType::kHello: return "hello";
    case MessageType::kWelcome: return "welcome";
    case MessageType::kPull: return "pull";
    case MessageType::kPush: return "push";
    case MessageType::kParams: return "params";
    case MessageType::kStatusReply: return "status-reply";
    case MessageType::kDone: return "done";
    case MessageType::kError: return "error";
    case MessageType::kChallenge: return "challenge";
    case MessageType::kProof: return "proof";
  }
  return "type " + std::to_string(static_cast<int>(type));
}

size_t fixedFieldsSize(MessageType type) {
  switch (type) {
    case MessageType::kHello: return 1 + 4 + 8 + 8 + sizeof(Nonce);
    case MessageType::kChallenge: return sizeof(Nonce) + sizeof(Digest);
    case MessageType::kProof: return sizeof(Digest);
    case MessageType::kWelcome: return 4 * 8;
    case MessageType::kPush: return 8 + 4;
    case MessageType::kParams: return 8 + 1 + 1 + 4;
    case MessageType::kStatusReply: return 1 + 4 + 8 + 1;
    case MessageType::kDone: return 8;
    case MessageType::kPull:
    case MessageType::kError: return 0;
  }
  return 0;
}

size_t fieldsSize(const FrameHeader& frame) {
  return frame.type == MessageType::kError ? frame.length : fixedFieldsSize(frame.type);
}

bool carriesValues(MessageType type) {
  return type == MessageType::kPush || type == MessageType::kParams;
}

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
    throw ProtocolError("protocol version " + std::to_string(version) + " is not supported (" +
                        std::to_string(kProtocolVersion) + " is)");
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
    w.put(roleByte(m.role)).put(m.index).put(m.parameterCount).put(m.runId);
    putBytes(w, m.nonce);
  });
}

std::vector<std::uint8_t> encode(const Welcome& m) {
  return fields(
      [&](ByteWriter& w) { w.put(m.offset).put(m.count).put(m.globalStep).put(m.trainSteps); });
}

std::vector<std::uint8_t> encode(const Push& m) {
  return fields([&](ByteWriter& w) { w.put(m.localStep).put(m.loss); });
}

std::vector<std::uint8_t> encode(const Params& m) {
  return fields([&](ByteWriter& w) {
    w.put(m.globalStep).put(std::uint8_t(m.applied)).put(std::uint8_t(m.done)).put(m.serviceMicros);
  });
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
    return Hello{role, index, parameterCount, runId, getBytes<Nonce>(r)};
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
    return Welcome{offset, count, globalStep, r.get<std::uint64_t>()};
  });
}

Push decodePush(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto localStep = r.get<std::uint64_t>();
    return Push{localStep, r.get<float>()};
  });
}

Params decodeParams(const std::vector<std::uint8_t>& bytes) {
  return decodeExactly(bytes, [](ByteReader& r) {
    auto globalStep = r.get<std::uint64_t>();
    auto applied = flagFromByte(r.get<std::uint8_t>());
    auto done = flagFromByte(r.get<std::uint8_t>());
    return Params{globalStep, applied, done, r.get<std::uint32_t>()};
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
