#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "pstrain/net/message.hpp"

namespace pstrain::net {

// Bytes through a set of channels, counted by each of them as they go.
struct TrafficCounters {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> received{0};
};

// One frame's header and fixed fields. When valueCount > 0 the values are still to be read:
// Channel::receiveValues() puts them straight into their destination.
struct Incoming {
  MessageType type;
  std::vector<std::uint8_t> fields;
  size_t valueCount = 0;
};

// The transport seam: framed messages between two peers, in order. A TCP connection is one
// (Connection), an in-process pipe another (LoopbackNetwork), so the ps and worker logic above
// it runs unchanged over both.
class Channel {
 public:
  virtual ~Channel() = default;

  virtual void send(MessageType type, const std::vector<std::uint8_t>& fields = {},
                    const float* values = nullptr, size_t valueCount = 0) = 0;

  // The next frame. An error frame from the peer throws RefusedError with the peer's reason; a
  // peer that closed the channel, or silence longer than the receive timeout, throws
  // UnreachableError.
  virtual const Incoming& receive() = 0;
  // The values of the frame just received; throws ProtocolError unless there are `expected`.
  virtual void receiveValues(float* destination, size_t expected) = 0;

  // How long receive() waits for the peer; 0: for ever.
  virtual void setReceiveTimeout(double seconds) = 0;
  virtual std::string peerName() const = 0;

  // Tells the peer why it is refused; the caller closes the channel afterwards.
  void sendError(const std::string& reason);
  // The next frame, which must be of `type` and carry no values; returns its fields.
  const std::vector<std::uint8_t>& receiveExpected(MessageType type);
};

}  // namespace pstrain::net
