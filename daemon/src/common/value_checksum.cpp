#include "pstrain/common/value_checksum.hpp"

#include <cstring>

namespace pstrain {
namespace {

// splitmix64's finaliser: a bijection of 64 bits, so distinct (array, index, bits) never mix to
// one value.
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

std::uint64_t arraySum(std::uint64_t array, std::uint64_t offset, size_t count,
                       const float* values) {
  std::uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, values + i, sizeof(bits));
    // A zero adds nothing: an optimizer moment a slice does not carry is one of zeros.
    if (bits == 0) continue;
    // Index and array above the value's 32 bits: distinct for up to 2^29 parameters.
    sum += mix(((offset + i) << 35 | array << 32) | bits);
  }
  return sum;
}

}  // namespace

std::uint64_t valueChecksum(std::uint64_t offset, size_t count, const float* params,
                            const std::vector<const float*>& moments) {
  std::uint64_t sum = arraySum(0, offset, count, params);
  for (size_t m = 0; m < moments.size(); ++m) sum += arraySum(m + 1, offset, count, moments[m]);
  return sum;
}

}  // namespace pstrain
