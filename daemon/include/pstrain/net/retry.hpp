#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "pstrain/net/endpoint.hpp"

namespace pstrain::net {

// Runs `attempt` until it returns, again and again with capped exponential backoff while it
// fails with UnreachableError (the peer is not there yet, went away, or is another one for now),
// until `deadline`; then throws the last failure, naming the peer. Any other error (a refusal,
// a protocol error) ends it at once. The one retry loop of reaching a peer: pods start in
// parallel and their DNS records appear late. `waiting`, if set, is told of the first failed
// attempt and every tenth, with why: enough to see a wait without flooding the log.
using Waiting = std::function<void(int attempt, const std::string& failure)>;
void retryUntil(const Endpoint& endpoint, std::chrono::steady_clock::time_point deadline,
                const std::function<void()>& attempt, const Waiting& waiting);

}  // namespace pstrain::net
