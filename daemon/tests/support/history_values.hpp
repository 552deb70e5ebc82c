#pragma once

#include <string>
#include <vector>

#include "pstrain/observe/history_recorder.hpp"

namespace pstrain::testing {

// The invariants on the values a run's history records (its slices' checksums) and on what its
// re-cuts record: recut-values, recut-step, lost-state and restore-values, as history_checker.hpp
// describes them. `run`: every segment of one run.
void checkValues(const std::vector<const observe::HistorySegment*>& run,
                 std::vector<std::string>& violations);

}  // namespace pstrain::testing
