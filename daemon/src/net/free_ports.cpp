#include "pstrain/net/free_ports.hpp"

#include <Poco/Net/ServerSocket.h>

namespace pstrain::net {

std::vector<int> freeLoopbackPorts(int count) {
  // All are held open until every one is chosen, so none repeats.
  std::vector<Poco::Net::ServerSocket> held(static_cast<size_t>(count));
  std::vector<int> ports;
  for (auto& socket : held) {
    socket.bind(Poco::Net::SocketAddress("127.0.0.1", 0), true);
    ports.push_back(socket.address().port());
  }
  return ports;
}

}  // namespace pstrain::net
