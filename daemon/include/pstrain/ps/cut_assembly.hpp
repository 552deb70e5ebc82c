#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pstrain/net/message.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/shard_range.hpp"

namespace pstrain::ps {

// What a re-cut gathers and gives out: the whole parameter vector with its optimizer state,
// joined from the slices the frozen ps gave (net::SliceState with its values), and cut again
// into the new cut's slices. Pure: the client moves the frames.
class CutAssembly {
 public:
  // Starts from `copy`, worker 0's copy of all `parameterCount` parameters as of `generation`
  // and `globalStep`, with no optimizer state: what no ps gives as new keeps these values and
  // starts its state again.
  CutAssembly(const float* copy, size_t parameterCount, std::uint64_t generation,
              std::uint64_t globalStep);

  // A frozen ps's slice: `values` as the frame carries them (parameters, then each moment).
  // Where slices overlap, that of the newer generation wins (a re-cut that installed only some
  // of its slices leaves ps of two generations), then that of the later step, then a ps's over
  // the copy (a ps new to the run holds its initial values, at step 0).
  void add(const net::SliceState& state, const std::vector<float>& values);

  // The run's global step: the latest of the newest generation's slices (0 if none came).
  std::uint64_t globalStep() const;
  // The newest generation among the slices.
  std::uint64_t generation() const { return generation_; }
  // Parameters whose optimizer state came with them, and those whose state starts again.
  std::uint64_t movedState() const;
  // (At global step 0 every optimizer state is at its start: none is lost.)
  std::uint64_t lostState() const {
    return globalStep() == 0 ? 0 : parameterCount_ - movedState();
  }
  // The first range of parameters no ps gave, if any.
  std::optional<ShardRange> uncovered() const;
  // The number of ps of the newest cut a slice came from (0 if none came).
  int fromPs() const;

  // The state of `range` for a ps of the new cut: a frame's fields and values.
  net::SliceState slice(std::uint64_t generation, int psCount, int index, ShardRange range,
                        std::vector<float>& values) const;

 private:
  struct Given {
    net::SliceState state;
    std::vector<float> values;
  };
  // Whether the copy is newer than `state`.
  bool copyIsNewer(const net::SliceState& state) const;
  // Which parameters the slices given cover.
  std::vector<bool> covered() const;

  const size_t parameterCount_;
  std::vector<float> copy_;
  const std::uint64_t copyGeneration_;
  const std::uint64_t copyStep_;
  std::vector<Given> given_;  // oldest first
  std::uint64_t generation_ = 0;
};

}  // namespace pstrain::ps
