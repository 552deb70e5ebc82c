#pragma once

#include <Poco/Net/StreamSocket.h>

#include <chrono>
#include <functional>

#include "pstrain/cluster/placement.hpp"
#include "pstrain/ps/client.hpp"

namespace pstrain::cluster {

// Resolves `endpoint` and connects once (2 s at most); throws UnreachableError saying which
// step failed. Resolving anew each time finds a rescheduled pod's new address.
Poco::Net::StreamSocket connectOnce(const Endpoint& endpoint);

// Runs `attempt` until it returns, again and again with capped exponential backoff while it
// fails with UnreachableError (the peer is not there yet, went away, or is another one for now),
// until `deadline`; then throws the last failure, naming the peer. Any other error (a refusal,
// a protocol error) ends it at once. The one retry loop of reaching a peer: pods start
// in parallel and their DNS records appear late.
void retryUntil(const Endpoint& endpoint, std::chrono::steady_clock::time_point deadline,
                const std::function<void()>& attempt);

// Dials a ps over TCP (one connectOnce), counting the connection's bytes in `traffic`.
ps::Dialer tcpDialer(net::TrafficCounters* traffic);

}  // namespace pstrain::cluster
