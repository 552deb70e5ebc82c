#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/net/endpoint.hpp"
#include "pstrain/ps/client_observer.hpp"
#include "pstrain/ps/ps_links.hpp"

namespace pstrain::ps {

// Worker 0's part in a change of the ps: one worker re-cuts the parameters, so there is one
// re-cut at a time. It freezes the ps of the cut served and of the new one, joins their slices
// with its own copy (CutAssembly) and installs the new cut's slices on each. Whoever builds
// worker 0 hands its Client one; the other workers' clients have none and wait for its cut.
class RecutCoordinator {
 public:
  // `journal`: the file in which worker 0 keeps the ps that hold run `runId`'s state (those of
  // the cut served, and during a re-cut every ps it freezes), so that a worker 0 started again
  // finds a ps that leaves the cut and holds what no other ps does; "": none is kept.
  explicit RecutCoordinator(ClientObserver& observer, std::string journal = "",
                            std::uint64_t runId = 0);

  // The ps that hold the run's state now: those of the cut the client connected to.
  void remember(const std::vector<net::Endpoint>& holders);

  // The ps the settings name, when they are due to be read again (every settingsEverySeconds)
  // and name other ps than `links` has; nothing otherwise.
  std::optional<std::vector<net::Endpoint>> changedSettings(const PsLinks& links);

  // Re-cuts the parameters over `target`: the ps of `links` (released: the client connects to
  // the new cut after) and those it served last give their slices, `copy` (worker 0's copy, its
  // answers read) what none gives. With no copy (null: worker 0 started again), the run's initial
  // parameters give what no ps gives where the run has taken no step; past it, such a re-cut is
  // incomplete, as is one where a ps of `target` cannot be reached.
  RecutResult recut(PsLinks& links, const std::vector<net::Endpoint>& target,
                    const float* copy);

 private:
  ClientObserver& observer_;
  const std::string journal_;
  const std::uint64_t runId_;
  std::vector<net::Endpoint> remembered_;  // the journal's, as last written or read at start
  std::chrono::steady_clock::time_point nextSettingsRead_{};
};

}  // namespace pstrain::ps
