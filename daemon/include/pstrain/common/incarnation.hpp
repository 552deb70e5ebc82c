#pragma once

#include <cstdint>

namespace pstrain {

// A random 64-bit number that tells one life of a worker's client or a ps apart from every other:
// a restarted process, or a new client in one, draws another (the run's history keys on it).
std::uint64_t drawIncarnation();

}  // namespace pstrain
