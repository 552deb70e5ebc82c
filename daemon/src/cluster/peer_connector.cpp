#include "pstrain/cluster/peer_connector.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/SocketAddress.h>

#include <algorithm>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/net/connection.hpp"

namespace pstrain::cluster {

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

void retryUntil(const Endpoint& endpoint, std::chrono::steady_clock::time_point deadline,
                const std::function<void()>& attempt) {
  auto logger = log::logger("cluster");
  auto backoff = std::chrono::milliseconds(50);
  const auto maxBackoff = std::chrono::milliseconds(2000);
  for (int count = 1;; ++count) {
    std::string failure;
    try {
      attempt();
      return;
    } catch (const UnreachableError& e) {
      failure = e.what();
    }
    if (std::chrono::steady_clock::now() + backoff > deadline) {
      throw UnreachableError("peer " + endpoint.toString() + ": " + failure +
                             ", until the peer timeout (" + std::to_string(count) +
                             " attempts)");
    }
    // First attempt, then every few: enough to see a wait without flooding the log.
    if (count == 1 || count % 10 == 0) {
      logger->info("waiting for {} (attempt {}): {}", endpoint.toString(), count, failure);
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, maxBackoff);
  }
}

ps::Dialer tcpDialer(net::TrafficCounters* traffic) {
  return [traffic](const Endpoint& endpoint, std::uint32_t maxPayload) {
    return std::make_unique<net::Connection>(connectOnce(endpoint), maxPayload, traffic);
  };
}

}  // namespace pstrain::cluster
