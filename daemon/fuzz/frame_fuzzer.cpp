// libFuzzer target: arbitrary bytes as a frame (header, then fields) through the decoders that
// every connection runs on what it receives, and a push's values through a ps's PushEncoding or,
// in a lossy wire encoding, net::decodeValues.
// Anything but a ProtocolError is a bug.
#include <cstdint>
#include <cstring>
#include <vector>

#include "pstrain/common/error.hpp"
#include "pstrain/net/message.hpp"
#include "pstrain/ps/push_encoding.hpp"

using namespace pstrain::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size < kHeaderSize) return 0;
  HeaderBytes header;
  std::memcpy(header.data(), data, kHeaderSize);
  try {
    auto frame = decodeHeader(header, 1 << 16);
    size_t available = size - kHeaderSize;
    size_t fixed = fieldsSize(frame);
    std::vector<std::uint8_t> fields(data + kHeaderSize,
                                     data + kHeaderSize + std::min(fixed, available));
    switch (frame.type) {
      case MessageType::kHello: decodeHello(fields); break;
      case MessageType::kWelcome: decodeWelcome(fields); break;
      case MessageType::kPush: {
        // A small model whose first layer a batch of 1 factors, and a shard that cuts it.
        static const pstrain::model::Layout layout(12, {8}, 3);
        const pstrain::ps::ShardRange range{20, 60};
        const auto push = decodePush(fields);
        const size_t count = (frame.length - fixed) / sizeof(float);
        std::vector<float> gradient(range.count);
        if (push.encoding != WireEncoding::kFp32) {
          // As a ps: the words of its shard's count in that encoding, else refused.
          if (count != encodedWords(push.encoding, range.count)) break;
          if (available < fixed + count * sizeof(float)) break;
          std::vector<std::uint32_t> words(count);
          std::memcpy(words.data(), data + kHeaderSize + fixed, count * sizeof(float));
          decodeValues(push.encoding, words.data(), range.count, gradient.data(), false);
          break;
        }
        pstrain::ps::PushEncoding encoding(layout, range, push.batch);
        encoding.expectValues(count);
        if (available < fixed + count * sizeof(float)) break;  // a truncated frame
        std::vector<float> values(count);
        std::memcpy(values.data(), data + kHeaderSize + fixed, count * sizeof(float));
        encoding.decode(values.data(), gradient.data());
        break;
      }
      case MessageType::kParams: decodeParams(fields); break;
      case MessageType::kStatusReply: decodeStatusReply(fields); break;
      case MessageType::kDone: decodeDone(fields); break;
      case MessageType::kShardCopy: decodeShardCopy(fields); break;
      case MessageType::kChallenge: decodeChallenge(fields); break;
      case MessageType::kProof: decodeProof(fields); break;
      case MessageType::kCutFreeze: decodeCutFreeze(fields); break;
      case MessageType::kSliceState: decodeSliceState(fields, 1 << 16); break;
      case MessageType::kRecut: decodeRecut(fields); break;
      case MessageType::kPull:
      case MessageType::kError: break;
    }
  } catch (const pstrain::ProtocolError&) {
  }
  return 0;
}
