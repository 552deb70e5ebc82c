#include "pstrain/net/wire_encoding.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "pstrain/common/error.hpp"
#include "pstrain/net/block_codes.hpp"

namespace pstrain::net {
namespace {

using block_codes::bitsOf;
using block_codes::floatOf;
using block_codes::Quantized;
using block_codes::Logarithmic;
using block_codes::Bf16;

// Each in an AVX2 build and a baseline one, picked at load time: the blocks' loops run at twice
// the width where the CPU has it (the same operations on each value, so the same results).
// Clang (the fuzzing build) clones no function templates, and ThreadSanitizer cannot run the
// resolver that picks a clone at load time: there, the baseline alone.
#if defined(__clang__) || defined(__SANITIZE_THREAD__)
#define PSTRAIN_WIDE_LOOPS
#else
#define PSTRAIN_WIDE_LOOPS __attribute__((target_clones("avx2", "default")))
#endif

// Whole blocks in place, `plus` added to each first while it is in cache, each left with what
// its words did not carry; the last, partial block through one padded with zeros.
template <class Code>
PSTRAIN_WIDE_LOOPS void encodeBlocks(float* values, const float* plus, size_t count,
                                     std::uint32_t* words) {
  alignas(64) float decoded[kBlockValues];
  size_t at = 0;
  for (; at + kBlockValues <= count; at += kBlockValues) {
    float* __restrict block = values + at;
    if (plus) {
      for (size_t i = 0; i < kBlockValues; ++i) block[i] += plus[at + i];
    }
    Code::encode(block, words, decoded);
    for (size_t i = 0; i < kBlockValues; ++i) block[i] -= decoded[i];
    words += Code::blockWords();
  }
  if (at < count) {
    std::array<float, kBlockValues> block{};
    for (size_t i = at; i < count; ++i) block[i - at] = values[i] + (plus ? plus[i] : 0.0f);
    Code::encode(block.data(), words, decoded);
    for (size_t i = at; i < count; ++i) values[i] = block[i - at] - decoded[i - at];
  }
}

// A block of to - from encoded, and from plus what it decodes to, in one pass through each.
// Inlined where it is called, so a whole block's loops have their count fixed and vectorise.
template <class Code>
[[gnu::always_inline]] inline void changeBlock(const float* from, const float* to, size_t count,
                                               std::uint32_t* words, float* after) {
  alignas(64) float block[kBlockValues] = {};
  alignas(64) float decoded[kBlockValues];
  for (size_t i = 0; i < count; ++i) block[i] = to[i] - from[i];
  Code::encode(block, words, decoded);
  for (size_t i = 0; i < count; ++i) after[i] = from[i] + decoded[i];
}

template <class Code>
PSTRAIN_WIDE_LOOPS void changeBlocks(const float* from, const float* to, size_t count,
                                     std::uint32_t* words, float* after) {
  size_t at = 0;
  for (; at + kBlockValues <= count; at += kBlockValues) {
    changeBlock<Code>(from + at, to + at, kBlockValues, words, after + at);
    words += Code::blockWords();
  }
  if (at < count) changeBlock<Code>(from + at, to + at, count - at, words, after + at);
}

template <class Code>
PSTRAIN_WIDE_LOOPS void decodeBlocks(const std::uint32_t* words, size_t count, float* values, bool add) {
  size_t at = 0;
  for (; at + kBlockValues <= count; at += kBlockValues) {
    Code::decode(words, values + at, add);
    words += Code::blockWords();
  }
  if (at < count) {
    std::array<float, kBlockValues> block{};
    if (add) std::copy(values + at, values + count, block.begin());
    Code::decode(words, block.data(), add);
    std::copy(block.begin(), block.begin() + long(count - at), values + at);
  }
}

size_t blocks(size_t count) { return (count + kBlockValues - 1) / kBlockValues; }

}  // namespace

std::string encodingName(WireEncoding encoding) {
  switch (encoding) {
    case WireEncoding::kFp32: return "fp32";
    case WireEncoding::kBf16: return "bf16";
    case WireEncoding::kQ8: return "q8";
    case WireEncoding::kQ4: return "q4";
    case WireEncoding::kQ3: return "q3";
    case WireEncoding::kQ2: return "q2";
    case WireEncoding::kLog4: return "log4";
  }
  return "encoding " + std::to_string(int(encoding));
}

std::optional<WireEncoding> parseWireEncoding(const std::string& name) {
  for (auto encoding : {WireEncoding::kFp32, WireEncoding::kBf16, WireEncoding::kQ8,
                        WireEncoding::kQ4, WireEncoding::kQ3, WireEncoding::kQ2,
                        WireEncoding::kLog4}) {
    if (encodingName(encoding) == name) return encoding;
  }
  return std::nullopt;
}

WireEncoding wireEncodingFromByte(std::uint8_t byte) {
  if (byte > std::uint8_t(WireEncoding::kQ3)) {
    throw ProtocolError("unknown wire encoding " + std::to_string(int(byte)));
  }
  return WireEncoding(byte);
}

size_t encodedWords(WireEncoding encoding, size_t count) {
  switch (encoding) {
    case WireEncoding::kFp32: return count;
    case WireEncoding::kBf16: return blocks(count) * Bf16::blockWords();
    case WireEncoding::kQ8: return blocks(count) * Quantized<8>::blockWords();
    case WireEncoding::kQ4: return blocks(count) * Quantized<4>::blockWords();
    case WireEncoding::kQ3: return blocks(count) * Quantized<3>::blockWords();
    case WireEncoding::kQ2: return blocks(count) * Quantized<2>::blockWords();
    case WireEncoding::kLog4: return blocks(count) * Logarithmic::blockWords();
  }
  return count;
}

void encodeValues(WireEncoding encoding, float* values, const float* plus, size_t count,
                  std::uint32_t* words) {
  switch (encoding) {
    case WireEncoding::kFp32:
      for (size_t i = 0; i < count; ++i) words[i] = bitsOf(values[i] + (plus ? plus[i] : 0.0f));
      std::fill(values, values + count, 0.0f);
      return;
    case WireEncoding::kBf16: return encodeBlocks<Bf16>(values, plus, count, words);
    case WireEncoding::kQ8: return encodeBlocks<Quantized<8>>(values, plus, count, words);
    case WireEncoding::kQ4: return encodeBlocks<Quantized<4>>(values, plus, count, words);
    case WireEncoding::kQ3: return encodeBlocks<Quantized<3>>(values, plus, count, words);
    case WireEncoding::kQ2: return encodeBlocks<Quantized<2>>(values, plus, count, words);
    case WireEncoding::kLog4: return encodeBlocks<Logarithmic>(values, plus, count, words);
  }
}

void encodeChange(WireEncoding encoding, const float* from, const float* to, size_t count,
                  std::uint32_t* words, float* after) {
  switch (encoding) {
    case WireEncoding::kFp32:
      for (size_t i = 0; i < count; ++i) {
        words[i] = bitsOf(to[i] - from[i]);
        after[i] = from[i] + floatOf(words[i]);
      }
      return;
    case WireEncoding::kBf16: return changeBlocks<Bf16>(from, to, count, words, after);
    case WireEncoding::kQ8: return changeBlocks<Quantized<8>>(from, to, count, words, after);
    case WireEncoding::kQ4: return changeBlocks<Quantized<4>>(from, to, count, words, after);
    case WireEncoding::kQ3: return changeBlocks<Quantized<3>>(from, to, count, words, after);
    case WireEncoding::kQ2: return changeBlocks<Quantized<2>>(from, to, count, words, after);
    case WireEncoding::kLog4: return changeBlocks<Logarithmic>(from, to, count, words, after);
  }
}

void decodeValues(WireEncoding encoding, const std::uint32_t* words, size_t count, float* values,
                  bool add) {
  switch (encoding) {
    case WireEncoding::kFp32: {
      if (add) {
        for (size_t i = 0; i < count; ++i) values[i] += floatOf(words[i]);
      } else {
        std::memcpy(values, words, count * sizeof(float));
      }
      return;
    }
    case WireEncoding::kBf16: return decodeBlocks<Bf16>(words, count, values, add);
    case WireEncoding::kQ8: return decodeBlocks<Quantized<8>>(words, count, values, add);
    case WireEncoding::kQ4: return decodeBlocks<Quantized<4>>(words, count, values, add);
    case WireEncoding::kQ3: return decodeBlocks<Quantized<3>>(words, count, values, add);
    case WireEncoding::kQ2: return decodeBlocks<Quantized<2>>(words, count, values, add);
    case WireEncoding::kLog4: return decodeBlocks<Logarithmic>(words, count, values, add);
  }
}

}  // namespace pstrain::net
