#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pstrain/model/layout.hpp"
#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/wire_encoding.hpp"

namespace pstrain::ps {

struct ClientOptions {
  std::uint32_t worker = 0;
  std::uint64_t runId = 0;
  model::Layout layout = model::Layout::mnist({});  // the run's model
  std::string authKey;
  std::vector<net::Endpoint> ps;  // in shard order
  double peerTimeoutSeconds = 300;    // for a ps to appear, or to come back
  double idleTimeoutSeconds = 0;      // for an answer; 0: wait for ever
  // The ps as the settings say now, read again (empty: `ps` for ever). Worker 0's
  // RecutCoordinator re-cuts the parameters over them when they change; every worker connects to
  // them after a re-cut.
  std::function<std::vector<net::Endpoint>()> currentPs;
  double settingsEverySeconds = 1;  // how often worker 0 reads them again while it trains
  // Pushes sent before the oldest one's answer is read (Li et al.'s bounded delay): 1, each
  // push waits for its answer; more overlap the round trip with the next gradients' compute,
  // each computed on parameters that many answers old. At most net::kMaxPushesInFlight.
  int pushesInFlight = 1;
  // How pushes and answers go on the wire (net::WireEncoding); the ps must be set the same.
  net::WireEncoding pushEncoding = net::WireEncoding::kFp32;
  net::WireEncoding pullEncoding = net::WireEncoding::kFp32;
  // The run's seed: its initial parameters (model::initialParameters), which a worker 0 started
  // again, with no copy, gives a re-cut where no ps gives some and the run has taken no step.
  std::uint64_t seed = 0;
};

}  // namespace pstrain::ps
