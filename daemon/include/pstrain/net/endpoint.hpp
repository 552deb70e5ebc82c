#pragma once

#include <string>

namespace pstrain::net {

// Where a peer listens: a DNS name or address, and a port.
struct Endpoint {
  std::string host;
  int port = 0;

  std::string toString() const { return host + ":" + std::to_string(port); }
  bool operator==(const Endpoint& other) const { return host == other.host && port == other.port; }
};

// "host:port" or "[v6]:port"; throws ConfigError otherwise.
Endpoint parseEndpoint(const std::string& hostPort);

}  // namespace pstrain::net
