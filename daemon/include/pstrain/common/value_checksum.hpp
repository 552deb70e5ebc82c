#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pstrain {

// The checksum of a slice of the model's state that the run's history records
// (observe/history_recorder.hpp): the sum, mod 2^64, of a 64-bit mix of each value's array (0:
// the parameters, 1 on: each optimizer moment), its index in the whole parameter vector and its
// bits. A sum over values, so it is additive over disjoint ranges: the slices of one cut add up
// to what the slices of another cut of the same state add up to, and nothing but the same values
// at the same places (to a 2^-64 chance) gives the same sum. A value of +0.0 adds nothing, so
// that a slice without its optimizer moments sums as one whose moments are zeros, as the ps
// that takes it starts them.
//
// Of the `count` parameters from global index `offset`, and `count` values of each moment.
std::uint64_t valueChecksum(std::uint64_t offset, size_t count, const float* params,
                            const std::vector<const float*>& moments);

}  // namespace pstrain
