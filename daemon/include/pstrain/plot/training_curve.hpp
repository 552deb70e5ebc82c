#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::plot {

struct CurvePoint {
  std::uint64_t globalStep;
  double value;
};

// Training loss and test accuracy against the global step, as read from deploy.log files.
struct TrainingCurve {
  std::vector<CurvePoint> loss;      // from the ps lines, one point per global step
  std::vector<CurvePoint> accuracy;  // from worker 0's accuracy lines
};

// Reads the lines pstrain writes: "PS i: global step G done (..., loss L)" give the loss,
// "Accuracy at local step N: A" the accuracy at the global step of the worker line before it.
// Throws IoError when a file cannot be read.
TrainingCurve readTrainingCurve(const std::vector<std::string>& logPaths);

// An SVG line chart: loss on the left axis, accuracy (0-1) on the right, global step across.
// The loss is averaged down to at most `maxPoints` points; every accuracy point is kept and
// carries its values as data-step and data-accuracy attributes.
std::string renderSvg(const TrainingCurve& curve, size_t maxPoints = 400);

}  // namespace pstrain::plot
