#include "pstrain/cluster/peer_connector.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/SocketAddress.h>

#include <algorithm>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::cluster {

Poco::Net::StreamSocket connectWithRetry(const Endpoint& endpoint,
                                         std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  auto logger = log::logger("cluster");
  auto backoff = std::chrono::milliseconds(50);
  const auto maxBackoff = std::chrono::milliseconds(2000);
  for (int attempt = 1;; ++attempt) {
    std::string failure;
    bool resolved = false;
    try {
      Poco::Net::SocketAddress address(endpoint.host, static_cast<Poco::UInt16>(endpoint.port));
      resolved = true;
      Poco::Net::StreamSocket socket;
      socket.connect(address, Poco::Timespan(2, 0));
      return socket;
    } catch (const Poco::Exception& e) {
      failure = e.displayText();
    }
    if (Clock::now() + backoff > deadline) {
      throw PeerError("peer " + endpoint.toString() + ": " +
                      (resolved ? "no connection" : "DNS name did not resolve") +
                      " before the peer timeout, after " + std::to_string(attempt) +
                      " attempts (last error: " + failure + ")");
    }
    // First attempt, then every few: enough to see a wait without flooding the log.
    if (attempt == 1 || attempt % 10 == 0) {
      logger->info("waiting for {} {} (attempt {}): {}", resolved ? "connection to" : "DNS name",
                   endpoint.toString(), attempt, failure);
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, maxBackoff);
  }
}

}  // namespace pstrain::cluster
