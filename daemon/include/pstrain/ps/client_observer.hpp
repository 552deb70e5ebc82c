#pragma once

#include <string>

#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/message.hpp"

namespace pstrain::ps {

// A re-cut worker 0 made, from `fromPs` to `toPs` ps (generation `generation`) at `globalStep`:
// `movedState` parameters took their optimizer state along, `lostState` start it again (their
// ps, `unreached`, could not be reached). `checksum`: of the parameters and optimizer state it
// gave the ps of the new cut (common/value_checksum.hpp).
struct RecutOutcome {
  std::uint64_t generation;
  int fromPs;
  int toPs;
  std::uint64_t globalStep;
  std::uint64_t movedState;
  std::uint64_t lostState;
  std::string unreached;
  std::uint64_t checksum;
};

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
  // Worker 0 re-cut the parameters.
  virtual void recut(const RecutOutcome& outcome) = 0;
  // Worker 0's re-cut did not complete (`reason`: a ps went away during it). Some ps may serve
  // the new cut and some the old; connecting again finds them and re-cuts.
  virtual void recutIncomplete(const std::string& reason) = 0;
  // `ps` cannot be reached yet (its DNS name does not resolve, it does not answer): attempt
  // `attempt` failed with `reason`; the client tries again until the peer timeout.
  virtual void waiting(const net::Endpoint& ps, int attempt, const std::string& reason) = 0;
  // Push `pushNumber` (of the worker's step `localStep`) went to every ps of cut `generation`;
  // its gradient was computed on parameters at `basedOn`, the lowest global step the ps said.
  virtual void pushSent(std::uint64_t generation, std::uint64_t pushNumber,
                        std::uint64_t localStep, std::uint64_t basedOn) = 0;
  // The ps at `psIndex` of cut `generation` answered push `pushNumber` (0: a pull): `applied`,
  // its parameters at `globalStep`.
  virtual void answered(int psIndex, std::uint64_t generation, std::uint64_t pushNumber,
                        bool applied, std::uint64_t globalStep) = 0;
  // `ps` could not be told that this worker has finished (`reason`); it sees the channel end.
  virtual void goodbyeFailed(const net::Endpoint& ps, const std::string& reason) = 0;
};

}  // namespace pstrain::ps
