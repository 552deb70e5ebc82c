#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::plot {

struct CurvePoint {
  std::uint64_t globalStep;
  double value;
};

// Training loss and test accuracy against the global step, as read from events.jsonl files.
struct TrainingCurve {
  std::vector<CurvePoint> loss;      // from the ps step events, one point per global step
  std::vector<CurvePoint> accuracy;  // from worker 0's accuracy events
};

// Reads the events of every file: the ps's step events give the loss, the accuracy events the
// accuracy, each at its global step. Throws IoError when a file cannot be read.
TrainingCurve readTrainingCurve(const std::vector<std::string>& eventPaths);

// An SVG line chart: loss on the left axis, accuracy (0-1) on the right, global step across.
// The loss is averaged down to at most `maxPoints` (at least 2) points, its first kept as it is;
// the loss axis runs from 0 to the greatest loss drawn. Every accuracy point is kept and
// carries its values as data-step and data-accuracy attributes.
std::string renderSvg(const TrainingCurve& curve, size_t maxPoints = 400);

}  // namespace pstrain::plot
