#pragma once

#include <Poco/Net/StreamSocket.h>

#include <cstdint>
#include <string>

#include "pstrain/net/channel.hpp"

namespace pstrain::net {

// Framed messages over a persistent TCP connection (TCP_NODELAY: every frame is a request or an
// answer someone is waiting for). Frames larger than `maxPayload` are refused before any read.
class Connection : public Channel {
 public:
  Connection(Poco::Net::StreamSocket socket, std::uint32_t maxPayload,
             TrafficCounters* traffic = nullptr);

  void send(MessageType type, const std::vector<std::uint8_t>& fields = {},
            const float* values = nullptr, size_t valueCount = 0) override;
  const Incoming& receive() override;
  void receiveValues(float* destination, size_t expected) override;
  void setReceiveTimeout(double seconds) override;
  std::string peerName() const override { return peerName_; }

 private:
  void receiveExactly(void* destination, size_t bytes);

  Poco::Net::StreamSocket socket_;
  std::uint32_t maxPayload_;
  TrafficCounters* traffic_;
  std::string peerName_;
  Incoming incoming_;
};

}  // namespace pstrain::net
