#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pstrain::app {

// A worker's note that it finished run `runId`, kept in its checkpoint dir so that a restarted
// pod stays idle instead of training the completed run again; another run id starts afresh. A
// record that is there but unreadable throws IoError naming it.
std::optional<std::uint64_t> completedGlobalStep(const std::string& dir, std::uint64_t runId);
void recordCompletion(const std::string& dir, std::uint64_t runId, std::uint64_t globalStep);

}  // namespace pstrain::app
