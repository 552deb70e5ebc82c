#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "pstrain/net/channel.hpp"

namespace pstrain::net {

// What a server does with one peer's channel, until the peer leaves.
using Serve = std::function<void(Channel&)>;

// Runs `serve` on `channel` and logs how it ended. A peer that broke the protocol is told why
// (an error frame) and counted in `rejected`; a peer that vanished ends only its own session.
// Nothing escapes: one peer never takes the server down.
void runSession(Channel& channel, const Serve& serve, const std::string& loggerName,
                std::atomic<std::uint64_t>* rejected);

}  // namespace pstrain::net
