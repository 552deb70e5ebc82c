#include "pstrain/net/limits.hpp"

#include <algorithm>

#include "pstrain/net/message.hpp"

namespace pstrain::net {

std::uint32_t maxFrameBytes(std::initializer_list<MessageType> types, size_t parameterCount) {
  size_t fixed = 0;
  size_t valuesPerParameter = 1;
  for (const auto type : types) {
    fixed = std::max(fixed, fixedFieldsSize(type));
    if (type == MessageType::kSliceState) valuesPerParameter = 1 + kMaxMoments;
  }
  return std::uint32_t(fixed + parameterCount * valuesPerParameter * sizeof(float));
}

}  // namespace pstrain::net
