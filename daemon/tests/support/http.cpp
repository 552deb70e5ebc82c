#include "support/http.hpp"

#include <Poco/Net/StreamSocket.h>

#include <chrono>

#include "pstrain/common/error.hpp"

namespace pstrain::testing {

HttpResult httpGet(int port, const std::string& path) {
  try {
    return pstrain::observe::httpRequest("127.0.0.1", port, "GET", path, "", "", 2);
  } catch (const pstrain::PeerError&) {
    return {};  // not listening (yet), or the connection broke
  }
}

HttpResult httpPost(int port, const std::string& path, const std::string& body,
                    const std::string& contentType) {
  try {
    return pstrain::observe::httpRequest("127.0.0.1", port, "POST", path, body, contentType, 10);
  } catch (const pstrain::PeerError&) {
    return {};
  }
}

std::string rawRequest(int port, const std::string& request, bool trickle) {
  Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", Poco::UInt16(port)));
  socket.sendBytes(request.data(), int(request.size()));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (trickle && std::chrono::steady_clock::now() < deadline &&
         !socket.poll(Poco::Timespan(0, 200000), Poco::Net::Socket::SELECT_READ)) {
    try {
      socket.sendBytes("0", 1);
    } catch (const Poco::Exception&) {
      break;  // the server closed it
    }
  }
  socket.setReceiveTimeout(Poco::Timespan(20, 0));
  std::string answer;
  char buffer[4096];
  try {
    for (int n; (n = socket.receiveBytes(buffer, sizeof buffer)) > 0;) {
      answer.append(buffer, size_t(n));
    }
  } catch (const Poco::Exception&) {
  }
  return answer;
}

}  // namespace pstrain::testing
