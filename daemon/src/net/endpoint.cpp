#include "pstrain/net/endpoint.hpp"

#include "pstrain/common/error.hpp"

namespace pstrain::net {

Endpoint parseEndpoint(const std::string& hostPort) {
  auto colon = hostPort.rfind(':');
  if (colon == std::string::npos) throw ConfigError("'" + hostPort + "' is not host:port");
  std::string host = hostPort.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return Endpoint{host, std::stoi(hostPort.substr(colon + 1))};
}

}  // namespace pstrain::net
