#pragma once

#include <functional>
#include <string>

#include "pstrain/net/channel.hpp"

namespace pstrain::net {

// What a server does with one peer's channel, until the peer leaves.
using Serve = std::function<void(Channel&)>;

// What a server's connections tell its owner, who records it (an event, whose deploy.log line
// says it): net/ writes no line of its own.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  // A connection refused, from `address`, and why.
  virtual void rejected(const std::string& address, const std::string& reason) = 0;
  // A session with `peer` ended: the peer left or broke off, or (`failed`) on an error of its own.
  virtual void sessionEnded(const std::string& peer, const std::string& reason, bool failed) = 0;
  // The listener could not poll or accept: `what` happened.
  virtual void listenerFailed(const std::string& what) = 0;
};

// An observer that records nothing: for a server nobody watches (a test's).
SessionObserver& unobserved();

// Runs `serve` on `channel` and tells `observer` (where there is one) how it ended. A peer that
// broke the protocol is told why (an error frame) and rejected; a peer that vanished ends only
// its own session. Nothing escapes: one peer never takes the server down.
void runSession(Channel& channel, const Serve& serve, SessionObserver* observer);

}  // namespace pstrain::net
