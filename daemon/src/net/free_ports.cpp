#include "pstrain/net/free_ports.hpp"

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>

namespace pstrain::net {

std::vector<int> freeLoopbackPorts(int count) {
  // All are held open until every one is chosen, so none repeats.
  std::vector<Poco::Net::ServerSocket> held(static_cast<size_t>(count));
  std::vector<int> ports;
  for (auto& listener : held) {
    listener.bind(Poco::Net::SocketAddress("127.0.0.1", 0), true, false);  // no SO_REUSEPORT
    listener.listen(1);
    ports.push_back(listener.address().port());
  }
  // Each is left in TIME_WAIT by a connection to itself that its side closes first. For that
  // minute the kernel gives it to no bind to port 0 and to no outgoing connection, while a
  // listener that sets SO_REUSEADDR, as the daemon's do, can bind it. Released plainly, it could
  // be handed out before the process it was chosen for listens on it (two `pstrain local` runs
  // started together: a child failed with "Address already in use").
  for (auto& listener : held) {
    Poco::Net::StreamSocket client(listener.address());
    auto accepted = listener.acceptConnection();
    accepted.close();
    client.close();
  }
  return ports;
}

}  // namespace pstrain::net
