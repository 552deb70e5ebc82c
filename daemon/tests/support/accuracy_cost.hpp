#pragma once

#include <algorithm>

namespace pstrain::testing {

// What a fault cost in test accuracy: how far below its twin without the fault a run ended.
// Ending above the twin cost nothing: two asynchronous runs of the same settings end a hundredth
// or so apart either way, so only a loss says something about the fault.
inline double accuracyCost(double faulted, double twin) { return std::max(0.0, twin - faulted); }

}  // namespace pstrain::testing
