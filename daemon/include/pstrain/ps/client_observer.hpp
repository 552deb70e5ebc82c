#pragma once

#include <string>

#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/message.hpp"

namespace pstrain::ps {

// What a worker's ps client reports: the narrow view of metrics, events and log lines that the
// client has (app/ implements it onto them).
class ClientObserver {
 public:
  virtual ~ClientObserver() = default;

  // The first channel to `ps`, and what its welcome said.
  virtual void connected(const net::Endpoint& ps, const net::Welcome& welcome) = 0;
  // The channel to `ps` failed; the client reconnects.
  virtual void lost(const net::Endpoint& ps, const std::string& reason) = 0;
  // A channel to `ps` made again, whose parameters are at `globalStep`.
  virtual void reconnected(const net::Endpoint& ps, const net::Welcome& welcome,
                           std::uint64_t globalStep) = 0;
  // `ps` cannot be reached yet (its DNS name does not resolve, it does not answer): attempt
  // `attempt` failed with `reason`; the client tries again until the peer timeout.
  virtual void waiting(const net::Endpoint& ps, int attempt, const std::string& reason) = 0;
};

}  // namespace pstrain::ps
