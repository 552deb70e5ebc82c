#pragma once

#include <Poco/Net/StreamSocket.h>

#include <chrono>

#include "pstrain/cluster/placement.hpp"

namespace pstrain::cluster {

// Connects to a peer whose DNS name and port may appear late (pods start in parallel, DNS
// records follow): resolves and connects again and again with capped exponential backoff until
// the deadline, then throws PeerError saying which step failed. Each attempt resolves anew, so a
// rescheduled pod's new address is found.
Poco::Net::StreamSocket connectWithRetry(const Endpoint& endpoint,
                                         std::chrono::steady_clock::time_point deadline);

}  // namespace pstrain::cluster
