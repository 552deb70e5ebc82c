#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace pstrain::net {

enum class MessageType : std::uint16_t;  // message.hpp

// The most pushes a worker keeps in flight to one ps (ps::ClientOptions::pushesInFlight): a
// push's lag is below it.
constexpr std::uint32_t kMaxPushesInFlight = 16;

// The largest payload a peer takes in frames of `types` for a model of `parameterCount`
// parameters: the largest type's fixed fields and a value for every parameter, with kMaxMoments
// of optimizer state each where a slice-state may come. The one rule of both sides: a channel
// refuses a larger frame before reading it.
std::uint32_t maxFrameBytes(std::initializer_list<MessageType> types, size_t parameterCount);

}  // namespace pstrain::net
