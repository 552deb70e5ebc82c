#pragma once

#include <string>

#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/observe/worker_roster.hpp"

namespace pstrain::observe {

// /status: a JSON object of role, ordinal, state, global step, steps/s, loss, accuracy, peers,
// BLAS core, the run's settings (its wire encodings among them) and worker 0's result. A ps gives
// its `workers` too: the workers it has heard from; and `meters`, the staleness of its pushes.
// With `meters`, the bytes sent to and received from peers.
std::string statusJson(const Progress& progress, const WorkerRoster* workers = nullptr,
                       const Meters* meters = nullptr);

}  // namespace pstrain::observe
