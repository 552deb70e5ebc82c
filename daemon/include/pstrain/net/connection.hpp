#pragma once

#include <Poco/Net/StreamSocket.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "pstrain/net/message.hpp"

namespace pstrain::net {

// Bytes through a set of connections, counted by each of them as they go.
struct TrafficCounters {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> received{0};
};

// One frame's header and fixed fields. When valueCount > 0 the values are still on the wire:
// Connection::receiveValues() reads them straight into their destination.
struct Incoming {
  MessageType type;
  std::vector<std::uint8_t> fields;
  size_t valueCount = 0;
};

// Framed messages over a persistent TCP connection (TCP_NODELAY: every frame is a request or an
// answer someone is waiting for). Frames larger than `maxPayload` are refused before any read.
class Connection {
 public:
  Connection(Poco::Net::StreamSocket socket, std::uint32_t maxPayload,
             TrafficCounters* traffic = nullptr);

  void send(MessageType type, const std::vector<std::uint8_t>& fields = {},
            const float* values = nullptr, size_t valueCount = 0);
  // Tells the peer why it is refused; the caller closes the connection afterwards.
  void sendError(const std::string& reason);

  // The next frame. An error frame from the peer throws PeerError with the peer's reason;
  // a peer that closed the connection throws PeerError too.
  const Incoming& receive();
  // The values of the frame just received; throws ProtocolError unless there are `expected`.
  void receiveValues(float* destination, size_t expected);
  // The next frame, which must be of `type` and carry no values; returns its fields.
  const std::vector<std::uint8_t>& receiveExpected(MessageType type);

  std::string peerName() const { return peerName_; }
  Poco::Net::StreamSocket& socket() { return socket_; }

 private:
  void receiveExactly(void* destination, size_t bytes);

  Poco::Net::StreamSocket socket_;
  std::uint32_t maxPayload_;
  TrafficCounters* traffic_;
  std::string peerName_;
  Incoming incoming_;
};

}  // namespace pstrain::net
