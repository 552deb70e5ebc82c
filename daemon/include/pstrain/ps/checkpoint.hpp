#pragma once

#include <cstdint>
#include <vector>

#include "pstrain/ps/cut_position.hpp"

namespace pstrain::ps {

// What a ps checkpoint file holds, in order: the magic "PSTRCKT2", the run it belongs to, the
// cut the shard is of (generation, ps count, index, offset and count in the parameter vector),
// the global step, then the shard's own bytes (Shard::serialize: parameters and optimizer
// state). A file of the first format ("PSTRCKT1": run, offset, step, shard) is read as one of
// generation 0 with the count unknown (0).
struct Checkpoint {
  std::uint64_t runId = 0;
  CutPosition cut;
  std::uint64_t globalStep = 0;
  std::vector<std::uint8_t> shard;
};

std::vector<std::uint8_t> encodeCheckpoint(const Checkpoint& checkpoint);
// Throws DecodeError when `bytes` are not a checkpoint.
Checkpoint decodeCheckpoint(const std::vector<std::uint8_t>& bytes);

}  // namespace pstrain::ps
