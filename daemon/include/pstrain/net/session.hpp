#pragma once

#include <functional>
#include <string>

#include "pstrain/net/channel.hpp"

namespace pstrain::net {

// What a server does with one peer's channel, until the peer leaves.
using Serve = std::function<void(Channel&)>;

// Told of a connection refused, from `address`, and why. The caller records it (an event, whose
// deploy.log line says it): net/ writes no line of its own for it.
using Rejected = std::function<void(const std::string& address, const std::string& reason)>;

// Tells `rejected`, where there is one, of a refused connection.
void reject(const Rejected& rejected, const std::string& address, const std::string& reason);

// Runs `serve` on `channel` and logs how it ended. A peer that broke the protocol is told why
// (an error frame) and rejected; a peer that vanished ends only its own session.
// Nothing escapes: one peer never takes the server down.
void runSession(Channel& channel, const Serve& serve, const std::string& loggerName,
                const Rejected& rejected);

}  // namespace pstrain::net
