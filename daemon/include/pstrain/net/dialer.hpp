#pragma once

#include <Poco/Net/StreamSocket.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "pstrain/net/channel.hpp"
#include "pstrain/net/connection.hpp"
#include "pstrain/net/endpoint.hpp"

namespace pstrain::net {

// One attempt at a channel to a peer, for frames of up to `maxPayload` bytes: throws
// UnreachableError when it fails. The TCP dialer resolves and connects once; tests dial a
// LoopbackNetwork.
using Dialer =
    std::function<std::unique_ptr<Channel>(const Endpoint&, std::uint32_t maxPayload)>;

// Resolves `endpoint` and connects once (2 s at most); throws UnreachableError saying which
// step failed. Resolving anew each time finds a rescheduled pod's new address.
Poco::Net::StreamSocket connectOnce(const Endpoint& endpoint);

// Dials over TCP (one connectOnce), counting the connection's bytes in `traffic`.
Dialer tcpDialer(TrafficCounters* traffic);

}  // namespace pstrain::net
