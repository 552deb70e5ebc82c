#pragma once

#include <cstdint>

#include "pstrain/ps/cut_position.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// What worker 0's session may do to the cut a ps serves (Server): a re-cut freezes every ps,
// takes their slices, and installs the new cut's slice on each.
class CutControl {
 public:
  virtual ~CutControl() = default;

  virtual CutPosition cut() const = 0;
  // The cut served now applies no more pushes and gives its slice, for the cut of `generation`
  // (ProtocolError unless that is newer than the one served).
  virtual Shard::Slice freeze(std::uint64_t generation) = 0;
  // Serves `position` from `slice` from now on; a position of no parameters is out of the run.
  virtual void install(const CutPosition& position, const Shard::Slice& slice) = 0;
  // Gives back the cut frozen by a re-cut that did not install the next.
  virtual void thaw() = 0;
};

}  // namespace pstrain::ps
