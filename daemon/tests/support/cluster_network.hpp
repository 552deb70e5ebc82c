#pragma once

#include <memory>

#include "pstrain/net/dialer.hpp"
#include "pstrain/net/session.hpp"
#include "pstrain/ps/server.hpp"
#include "support/fault_proxy.hpp"

namespace pstrain::testing {

// What the in-process cluster's ps and workers talk over: frames through memory
// (net::LoopbackNetwork), or the daemon's own TCP listener, dialer and connections on 127.0.0.1,
// directly or through a FaultProxy in front of each ps (whose toxics a test sets).
enum class Transport { kLoopback, kTcp, kTcpThroughProxy };

// The network of one in-process cluster: where each ps listens, how each worker dials, and a
// worker's cable to pull and plug back in.
class ClusterNetwork {
 public:
  // For `psCount` ps (their endpoints are fixed for the cluster's life, across restarts).
  static std::unique_ptr<ClusterNetwork> make(Transport transport, int psCount);
  virtual ~ClusterNetwork() = default;

  virtual net::Endpoint psEndpoint(int index) const = 0;
  // Serves ps `index`'s endpoint: each worker's channel runs `serve` on a thread of its own.
  // `server`, `traffic` and `observer` are the ps's, for what its listener needs of them.
  virtual void listen(int index, const ps::Server& server, net::TrafficCounters* traffic,
                      net::SessionObserver* observer, net::Serve serve) = 0;
  // Stops serving ps `index`'s endpoint, as a process that dies: its channels close, its
  // sessions end.
  virtual void close(int index) = 0;
  // How worker `index` dials a ps, counting its bytes in `traffic` where the transport has any.
  virtual net::Dialer dialer(int worker, net::TrafficCounters* traffic) = 0;

  // Takes worker `worker` off the network: its channels break and its dials fail until restore().
  virtual void cutOff(int worker) = 0;
  virtual void restore(int worker) = 0;

  // The proxy every worker reaches ps `index` through (kTcpThroughProxy only).
  virtual FaultProxy& proxy(int index);
};

}  // namespace pstrain::testing
