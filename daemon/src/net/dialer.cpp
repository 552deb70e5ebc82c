#include "pstrain/net/dialer.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/SocketAddress.h>

#include "pstrain/common/error.hpp"

namespace pstrain::net {

Poco::Net::StreamSocket connectOnce(const Endpoint& endpoint) {
  std::unique_ptr<Poco::Net::SocketAddress> address;
  try {
    address = std::make_unique<Poco::Net::SocketAddress>(
        endpoint.host, static_cast<Poco::UInt16>(endpoint.port));
  } catch (const Poco::Exception& e) {
    throw UnreachableError("DNS name did not resolve (" + e.displayText() + ")");
  }
  try {
    Poco::Net::StreamSocket socket;
    socket.connect(*address, Poco::Timespan(2, 0));
    return socket;
  } catch (const Poco::Exception& e) {
    throw UnreachableError("no connection (" + e.displayText() + ")");
  }
}

Dialer tcpDialer(TrafficCounters* traffic) {
  return [traffic](const Endpoint& endpoint, std::uint32_t maxPayload) {
    return std::make_unique<Connection>(connectOnce(endpoint), maxPayload, traffic);
  };
}

}  // namespace pstrain::net
