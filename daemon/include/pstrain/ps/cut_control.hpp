#pragma once

#include <cstdint>
#include <vector>

#include "pstrain/ps/cut_position.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// A slice of a cut with its optimizer state, and the cut it is of.
struct CutSlice {
  CutPosition position;
  Shard::Slice slice;
};

// What worker 0's session may do to the cut a ps serves (Server). A re-cut has two phases:
// worker 0 freezes every ps and takes their slices, gives each its slice of the new cut
// (prepare), and once every ps holds its slice, tells each to serve it (commit). A ps keeps the
// slice it froze until the next re-cut: where worker 0 died between commits, some ps serve the
// new cut and some the old, and the next re-cut joins the new slices with those kept.
class CutControl {
 public:
  virtual ~CutControl() = default;

  virtual CutPosition cut() const = 0;
  // What a freeze gives: the slice of the cut served, then the one kept from the re-cut before,
  // if any; and the freeze's number, for the thaw.
  struct Frozen {
    std::uint64_t number;
    std::vector<CutSlice> slices;
  };
  // The cut served now applies no more pushes and gives its slice, for the cut of `generation`
  // (ProtocolError unless that is newer than the one served).
  virtual Frozen freeze(std::uint64_t generation) = 0;
  // Holds `given` to serve once committed; a position of no parameters is out of the run.
  virtual void prepare(const CutSlice& given) = 0;
  // Serves the slice prepared for `generation` from now on (ProtocolError if none is); returns
  // the global step it serves from.
  virtual std::uint64_t commit(std::uint64_t generation) = 0;
  // Gives back the cut of freeze `number` where that re-cut committed none, and drops its
  // slice; nothing where another freeze came since (a worker 0 started again re-cuts).
  virtual void thaw(std::uint64_t number) = 0;
};

}  // namespace pstrain::ps
