#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pstrain::net {

// How the values of a push (gradients) or of an answer (parameters, or their change since the
// copy the worker holds) go on the wire. fp32 sends them as they are; the others are lossy, and
// whoever uses them keeps what the wire lost and sends it later (error feedback: a worker its
// gradient's remainder, a ps the difference between its parameters and the worker's copy), so
// over the run every value gets through.
//
// The encoded values are 32-bit words in blocks of kBlockValues values: the block's scale (a
// float32, the step between levels), then its codes. qN codes each value as one of
// 2^(N-1) - 1 levels either side of zero (q2: -1, 0, 1; q3: -3..3; q4: -7..7; q8: -127..127),
// 32/N codes to a word (q3: its codes' low 2 bits, 16 to a word, then their high bits). log4
// codes each value in 4 bits as zero or a sign and a power of two from the block's largest
// magnitude down to 1/64 of it: small values keep their size relative to the large ones (Adam
// divides each by its own running magnitude). bf16 keeps float32's top 16 bits, rounded to
// nearest even, two to a word, and no scale. A word holds values that lie a fixed stride apart in the block
// (value i of the block is in word i % W, W words to a block), which lets both ends pack and
// unpack whole vector registers at a time.
enum class WireEncoding : std::uint8_t {
  kFp32 = 0,
  kBf16 = 1,
  kQ8 = 2,
  kQ4 = 3,
  kQ2 = 4,
  kLog4 = 5,
  kQ3 = 6,
};

constexpr size_t kBlockValues = 128;

// "fp32", "bf16", "q8", "q4", "q3", "q2", "log4"; parseWireEncoding() reads those back (nullopt: none of them).
std::string encodingName(WireEncoding encoding);
std::optional<WireEncoding> parseWireEncoding(const std::string& name);
// One of the enum's values; the wire's byte for it, checked (ProtocolError otherwise).
WireEncoding wireEncodingFromByte(std::uint8_t byte);

// The 32-bit words that `count` values take in `encoding`.
size_t encodedWords(WireEncoding encoding, size_t count);

// Encodes `count` values, each plus the same of `plus` (none: null), into encodedWords() words
// at `words`, and leaves in `values` what it did not send (the sum - the decoded value; fp32
// sends it all). A worker's push: what earlier pushes did not send plus its gradient.
void encodeValues(WireEncoding encoding, float* values, const float* plus, size_t count,
                  std::uint32_t* words);

// Encodes the change from `from` to `to` and writes into `after` the copy that a receiver which
// held `from` holds once it has added the decoded words to it (decodeValues with `add`): a ps's
// answer and its record of the worker's copy, in one pass.
void encodeChange(WireEncoding encoding, const float* from, const float* to, size_t count,
                  std::uint32_t* words, float* after);

// Decodes `count` values from `words`: into `values`, or added to them (`add`). Worker and ps
// apply an answer's change with this one function, so their copies stay bit for bit the same.
void decodeValues(WireEncoding encoding, const std::uint32_t* words, size_t count, float* values,
                  bool add);

}  // namespace pstrain::net
