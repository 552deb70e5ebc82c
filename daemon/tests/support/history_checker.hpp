#pragma once

#include <string>
#include <vector>

#include "pstrain/observe/history_recorder.hpp"

namespace pstrain::testing {

// Checks the histories of runs (observe::HistoryRecorder) against what a run must do, whatever
// befell it: every process's segment, grouped into runs by their run id. Each violation is one
// line that starts with the name of the invariant it breaks:
//
//   step-sequence     a ps's global step rises by exactly one per step (async: per push applied;
//                     sync: per step closed), from where the ps started serving the cut (0, the
//                     checkpoint it restored, a worker's copy it recovered, the slice a re-cut
//                     installed), within each of its lives and each cut; the last steps of a
//                     life that a kill ended may lack their records, one for each worker
//   push-once         no ps applies a push (client incarnation and push number) twice, across
//                     reconnections, restarts and re-cuts
//   final-step        no step goes beyond trainSteps, and every ps of the last cut ends at it
//   sync-staleness    sync: every push applied was computed on the parameters of the step before
//   sync-worker-once  sync: no step counts one worker twice
//   restore           a ps restores no older step than the last checkpoint it recorded, and none
//                     beyond the steps it reached (without a checkpoint it starts at 0)
//   answered-applied  a push a worker was told was applied was recorded applied by that ps (a
//                     ps records a push before it answers, so a restart loses no such record)
//
// and on values, from the checksums of the slices the ps record (support/history_values):
//
//   recut-values      what a re-cut installed adds up to what worker 0 recorded giving the ps,
//                     and to what it assembled from the slices it froze (of overlapping ones, the
//                     newer generation's, then the later step's) where it recorded no state lost
//                     and the slices that win are whole; a thaw gives back what was frozen
//   recut-step        a re-cut installs no step below the highest its frozen slices were at,
//                     unless it recorded lost state
//   lost-state        a re-cut that lost optimizer state (worker 0's record) did not reach a ps,
//                     or took a slice from a ps that had come back from a checkpoint or without
//                     one, behind the re-cut's step
//   restore-values    a restore holds the values of the last checkpoint the ps recorded at that
//                     path, generation and step
std::vector<std::string> checkHistories(const std::vector<observe::HistorySegment>& segments);

// Every history segment of the files under `dirs`, recursively (a history file is one that
// starts with the history's magic); throws IoError where one cannot be read.
std::vector<observe::HistorySegment> readHistories(const std::vector<std::string>& dirs);

}  // namespace pstrain::testing
