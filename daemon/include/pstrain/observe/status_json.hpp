#pragma once

#include <string>

#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/observe/worker_roster.hpp"

namespace pstrain::observe {

// /status: a JSON object of role, ordinal, state, global step, steps/s, loss, accuracy, peers,
// BLAS core, the run's settings and worker 0's result. A ps gives its `workers` and `meters`
// too: the workers it has heard from and the staleness of their pushes; a worker gives null.
std::string statusJson(const Progress& progress, const WorkerRoster* workers = nullptr,
                       const Meters* meters = nullptr);

}  // namespace pstrain::observe
