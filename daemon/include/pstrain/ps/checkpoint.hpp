#pragma once

#include <cstdint>
#include <vector>

namespace pstrain::ps {

// What a ps checkpoint file holds, in order: the magic "PSTRCKT1", the run it belongs to, the
// offset of the shard in the parameter vector, the global step, then the shard's own bytes
// (Shard::serialize: parameters and optimizer state).
struct Checkpoint {
  std::uint64_t runId = 0;
  std::uint64_t offset = 0;
  std::uint64_t globalStep = 0;
  std::vector<std::uint8_t> shard;
};

std::vector<std::uint8_t> encodeCheckpoint(const Checkpoint& checkpoint);
// Throws DecodeError when `bytes` are not a checkpoint.
Checkpoint decodeCheckpoint(const std::vector<std::uint8_t>& bytes);

}  // namespace pstrain::ps
