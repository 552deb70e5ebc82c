#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pstrain/net/wire_encoding.hpp"

// The block codes of the lossy wire encodings (wire_encoding.hpp has their layout): each turns a
// block of kBlockValues floats into blockWords() words and back. A new encoding is a code here
// and a case in each of wire_encoding.cpp's switches.
//
// A code's encode(values, words, decoded) writes the words and the values they decode to, bit for
// bit as its decode(words, values, add) would, which sets (or, with add, adds) the values.
namespace pstrain::net::block_codes {

inline std::uint32_t bitsOf(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float floatOf(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// The largest magnitude of a block, compared as the bits of |value|: for numbers their order is
// the integers' (and the loop vectorises, where a float comparison's NaN rule would stop it).
inline float largestMagnitude(const float* values) {
  std::int32_t largestBits = 0;
  for (size_t i = 0; i < kBlockValues; ++i) {
    const auto magnitude = std::int32_t(bitsOf(values[i]) & 0x7FFFFFFFu);
    largestBits = magnitude > largestBits ? magnitude : largestBits;
  }
  return floatOf(std::uint32_t(largestBits));
}

// One plane of a block's codes: bits Offset..Offset+Width-1 of each code, 32/Width to a word,
// value i of the block in word i % W at bit Width * (i / W).
template <int Width, int Offset>
struct CodePlane {
  static constexpr size_t kPerWord = 32 / Width;
  static constexpr size_t kWords = kBlockValues / kPerWord;
  static constexpr std::uint32_t kMask = (1u << Width) - 1;

  static void pack(const std::int32_t* codes, std::uint32_t* words) {
    alignas(16) std::uint32_t packed[kWords] = {};
    for (size_t j = 0; j < kPerWord; ++j) {
      for (size_t i = 0; i < kWords; ++i) {
        packed[i] |= ((std::uint32_t(codes[j * kWords + i]) >> Offset) & kMask) << (j * Width);
      }
    }
    std::memcpy(words, packed, sizeof packed);
  }

  // Adds this plane's bits to `codes`.
  static void unpack(const std::uint32_t* words, std::int32_t* codes) {
    for (size_t j = 0; j < kPerWord; ++j) {
      for (size_t i = 0; i < kWords; ++i) {
        codes[j * kWords + i] |= std::int32_t(((words[i] >> (j * Width)) & kMask) << Offset);
      }
    }
  }
};

// qN's codes in planes: one of N bits where N divides 32; q3's as a plane of their low 2 bits
// and a plane of their high bit.
template <int Bits>
struct CodePlanes {
  static constexpr size_t kWords = CodePlane<Bits, 0>::kWords;
  static void pack(const std::int32_t* codes, std::uint32_t* words) {
    CodePlane<Bits, 0>::pack(codes, words);
  }
  static void unpack(const std::uint32_t* words, std::int32_t* codes) {
    CodePlane<Bits, 0>::unpack(words, codes);
  }
};

template <>
struct CodePlanes<3> {
  using Low = CodePlane<2, 0>;
  using High = CodePlane<1, 2>;
  static constexpr size_t kWords = Low::kWords + High::kWords;
  static void pack(const std::int32_t* codes, std::uint32_t* words) {
    Low::pack(codes, words);
    High::pack(codes, words + Low::kWords);
  }
  static void unpack(const std::uint32_t* words, std::int32_t* codes) {
    Low::unpack(words, codes);
    High::unpack(words + Low::kWords, codes);
  }
};

// qN: `kLevels` levels either side of zero, a step apart (the block's largest magnitude over
// kLevels, in its first word).
template <int Bits>
struct Quantized {
  static constexpr int kLevels = (1 << (Bits - 1)) - 1;
  using Planes = CodePlanes<Bits>;

  static constexpr size_t blockWords() { return 1 + Planes::kWords; }

  static void encode(const float* __restrict values, std::uint32_t* out,
                     float* __restrict decoded) {
    const float largest = largestMagnitude(values);
    const float scale = largest / float(kLevels);
    const float inverse = largest > 0 ? float(kLevels) / largest : 0.0f;
    out[0] = bitsOf(scale);
    // Round to nearest: |value * inverse| <= kLevels, so adding kLevels + 0.5 makes it positive
    // and truncation floors it. (Not a number gives an arbitrary level.)
    alignas(16) std::int32_t codes[kBlockValues];
    for (size_t i = 0; i < kBlockValues; ++i) {
      codes[i] = std::int32_t(values[i] * inverse + (float(kLevels) + 0.5f)) & ((1 << Bits) - 1);
      decoded[i] = float(codes[i] - kLevels) * scale;
    }
    Planes::pack(codes, out + 1);
  }

  static void decode(const std::uint32_t* in, float* __restrict values, bool add) {
    const float scale = floatOf(in[0]);
    alignas(16) std::int32_t codes[kBlockValues] = {};
    Planes::unpack(in + 1, codes);
    for (size_t i = 0; i < kBlockValues; ++i) {
      const float decoded = float(codes[i] - kLevels) * scale;
      values[i] = add ? values[i] + decoded : decoded;
    }
  }
};

// 4 bits a value: a sign bit and a level, 0 for zero, j = 1..7 for the block's largest magnitude
// times 2^(j - 7). Each value goes to the nearer of the two levels around it.
struct Logarithmic {
  static constexpr size_t kPerWord = 8;
  static constexpr size_t kWords = kBlockValues / kPerWord;
  static constexpr std::int32_t kTop = 7;  // the level of the largest magnitude
  static constexpr size_t blockWords() { return 1 + kWords; }

  // The level of `ratio` (|value| / largest, at most 1 give or take rounding): from its float
  // bits, the exponent plus one where the mantissa is at least 1.5 (nearer the next power).
  static std::int32_t level(float ratio) {
    const auto bits = std::int32_t(bitsOf(ratio));
    const std::int32_t exponent = ((bits >> 23) & 0xFF) - 127;
    const std::int32_t j = exponent + kTop + ((bits >> 22) & 1);
    // Between 0 and the lowest level the midpoint is half of it: 2^-7 and up go to level 1.
    const std::int32_t above = -std::int32_t(exponent >= -kTop);  // all ones or zero
    return std::min(std::max(j, 1), kTop) & above;
  }

  // The value of level `j` with sign bit `negative` in a block whose largest magnitude has the
  // bits `largest`: its exponent less kTop - j (exact, the block being far above float's
  // smallest normal), or zero; in integer operations alone, so the loops vectorise.
  static float value(std::int32_t j, std::uint32_t negative, std::uint32_t largest) {
    const std::uint32_t keep = -std::uint32_t(j > 0);
    return floatOf(((largest - (std::uint32_t(kTop - j) << 23)) | (negative << 31)) & keep);
  }

  static void encode(const float* values, std::uint32_t* out, float* decoded) {
    // Below float's normal range times 2^6 the powers would not be exact: such a block is zero.
    float largest = largestMagnitude(values);
    if (!(largest >= 1e-30f)) largest = 0;
    const float inverse = largest > 0 ? 1.0f / largest : 0.0f;
    const std::uint32_t scale = bitsOf(largest);
    out[0] = scale;
    alignas(16) std::uint32_t packed[kWords] = {};
    for (size_t j = 0; j < kPerWord; ++j) {
      const float* __restrict row = values + j * kWords;
      float* __restrict rowDecoded = decoded + j * kWords;
      alignas(16) std::int32_t steps[kWords];
      alignas(16) std::uint32_t signs[kWords];
      for (size_t i = 0; i < kWords; ++i) {
        steps[i] = level(std::fabs(row[i]) * inverse);
        signs[i] = (bitsOf(row[i]) >> 31) & std::uint32_t(steps[i] > 0);
      }
      for (size_t i = 0; i < kWords; ++i) {
        packed[i] |= (std::uint32_t(steps[i]) | (signs[i] << 3)) << (j * 4);
        rowDecoded[i] = value(steps[i], signs[i], scale);
      }
    }
    std::memcpy(out + 1, packed, sizeof packed);
  }

  static void decode(const std::uint32_t* in, float* values, bool add) {
    const std::uint32_t* words = in + 1;
    for (size_t j = 0; j < kPerWord; ++j) {
      float* __restrict row = values + j * kWords;
      alignas(16) float decoded[kWords];
      for (size_t i = 0; i < kWords; ++i) {
        const std::uint32_t code = (words[i] >> (j * 4)) & 0xFu;
        decoded[i] = value(std::int32_t(code & 7u), code >> 3, in[0]);
      }
      if (add) {
        for (size_t i = 0; i < kWords; ++i) row[i] += decoded[i];
      } else {
        std::memcpy(row, decoded, sizeof decoded);
      }
    }
  }
};

struct Bf16 {
  static constexpr size_t kWords = kBlockValues / 2;
  static constexpr size_t blockWords() { return kWords; }

  static std::uint32_t rounded(float value) {
    const std::uint32_t bits = bitsOf(value);
    return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  }

  static void encode(const float* values, std::uint32_t* out, float* decoded) {
    const float* high = values + kWords;
    for (size_t i = 0; i < kWords; ++i) {
      const std::uint32_t low16 = rounded(values[i]);
      const std::uint32_t high16 = rounded(high[i]);
      out[i] = low16 | (high16 << 16);
      decoded[i] = floatOf(low16 << 16);
      decoded[kWords + i] = floatOf(high16 << 16);
    }
  }

  static void decode(const std::uint32_t* in, float* values, bool add) {
    float* high = values + kWords;
    for (size_t i = 0; i < kWords; ++i) {
      const float low = floatOf(in[i] << 16);
      const float top = floatOf(in[i] & 0xFFFF0000u);
      values[i] = add ? values[i] + low : low;
      high[i] = add ? high[i] + top : top;
    }
  }
};

}  // namespace pstrain::net::block_codes
