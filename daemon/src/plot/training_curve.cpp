#include "pstrain/plot/training_curve.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "pstrain/observe/events.hpp"

namespace pstrain::plot {
namespace {

constexpr double kWidth = 800;
constexpr double kHeight = 450;
constexpr double kLeft = 70;
constexpr double kRight = 70;
constexpr double kTop = 50;
constexpr double kBottom = 60;

// At most maxPoints (at least 2) of the points: the first as it is, the untrained model's loss
// (the curve's highest, which a mean with the steps after it would hide, and with it the axis's
// top), then the means of even runs of the rest.
std::vector<CurvePoint> averageDown(const std::vector<CurvePoint>& points, size_t maxPoints) {
  if (points.size() <= maxPoints) return points;
  std::vector<CurvePoint> result{points.front()};
  const size_t rest = points.size() - 1;
  const size_t buckets = maxPoints - 1;
  for (size_t bucket = 0; bucket < buckets; ++bucket) {
    size_t begin = 1 + rest * bucket / buckets;
    size_t end = 1 + rest * (bucket + 1) / buckets;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += points[i].value;
    result.push_back({points[end - 1].globalStep, sum / double(end - begin)});
  }
  return result;
}

std::string fixed(double value, int digits = 1) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

// A round step between ticks for a range, e.g. 0-3000 -> 500.
double tickStep(double range) {
  double raw = range / 5;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * magnitude) return factor * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

TrainingCurve readTrainingCurve(const std::vector<std::string>& eventPaths) {
  std::map<std::uint64_t, double> loss;
  std::map<std::uint64_t, double> accuracy;
  for (const auto& path : eventPaths) {
    for (const auto& event : observe::readEvents(path)) {
      const auto name = event->optValue<std::string>("event", "");
      const auto step = event->optValue<std::uint64_t>("step", 0);
      if (name == "step" && event->optValue<std::string>("role", "") == "ps" &&
          !event->isNull("loss")) {
        loss[step] = event->getValue<double>("loss");
      } else if (name == "accuracy") {
        accuracy[step] = event->getValue<double>("accuracy");
      }
    }
  }
  TrainingCurve curve;
  for (const auto& [step, value] : loss) curve.loss.push_back({step, value});
  for (const auto& [step, value] : accuracy) curve.accuracy.push_back({step, value});
  return curve;
}

namespace {

// The plot's scales: global step across, loss (0 to its largest) and accuracy (0 to 1) up.
struct Frame {
  std::uint64_t lastStep = 1;
  double maxLoss = 0;
  double width = kWidth - kLeft - kRight;
  double height = kHeight - kTop - kBottom;

  double x(std::uint64_t step) const { return kLeft + width * double(step) / double(lastStep); }
  double yLoss(double v) const { return kTop + height * (1 - std::min(v, maxLoss) / maxLoss); }
  double yAccuracy(double v) const { return kTop + height * (1 - v); }
};

Frame frameOf(const std::vector<CurvePoint>& loss, const std::vector<CurvePoint>& accuracy) {
  Frame frame;
  for (const auto& p : loss) {
    frame.lastStep = std::max(frame.lastStep, p.globalStep);
    if (std::isfinite(p.value)) frame.maxLoss = std::max(frame.maxLoss, p.value);
  }
  for (const auto& p : accuracy) frame.lastStep = std::max(frame.lastStep, p.globalStep);
  if (frame.maxLoss <= 0) frame.maxLoss = 1;
  return frame;
}

// The title, the grid with its ticks, the plot's border and the axes' names.
void writeAxes(std::ostringstream& svg, const Frame& f) {
  svg << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << kWidth << R"(" height=")"
      << kHeight << R"(" viewBox="0 0 )" << kWidth << " " << kHeight
      << R"(" font-family="sans-serif" font-size="12">)" << "\n"
      << R"(<title>pstrain training curve</title>)" << "\n"
      << R"(<rect width="100%" height="100%" fill="white"/>)" << "\n"
      << R"(<text x=")" << kWidth / 2 << R"(" y="28" text-anchor="middle" font-size="16">)"
      << "Training loss and test accuracy</text>\n";
  const double stepTick = tickStep(double(f.lastStep));
  for (double s = 0; s <= double(f.lastStep) + 1e-9; s += stepTick) {
    const double px = f.x(std::uint64_t(s));
    svg << R"(<line x1=")" << px << R"(" y1=")" << kTop << R"(" x2=")" << px << R"(" y2=")"
        << kTop + f.height << R"(" stroke="#e5e5e5"/>)"
        << R"(<text x=")" << px << R"(" y=")" << kTop + f.height + 16
        << R"(" text-anchor="middle">)" << std::uint64_t(s) << "</text>\n";
  }
  for (int i = 0; i <= 5; ++i) {
    const double fraction = i / 5.0;
    const double py = kTop + f.height * (1 - fraction);
    svg << R"(<line x1=")" << kLeft << R"(" y1=")" << py << R"(" x2=")" << kLeft + f.width
        << R"(" y2=")" << py << R"(" stroke="#e5e5e5"/>)"
        << R"(<text x=")" << kLeft - 6 << R"(" y=")" << py + 4 << R"(" text-anchor="end">)"
        << fixed(f.maxLoss * fraction, 2) << "</text>"
        << R"(<text x=")" << kLeft + f.width + 6 << R"(" y=")" << py + 4 << R"(">)"
        << fixed(fraction, 1) << "</text>\n";
  }
  svg << R"(<rect x=")" << kLeft << R"(" y=")" << kTop << R"(" width=")" << f.width
      << R"(" height=")" << f.height << R"(" fill="none" stroke="#333"/>)" << "\n"
      << R"(<text x=")" << kLeft + f.width / 2 << R"(" y=")" << kHeight - 18
      << R"(" text-anchor="middle">global step</text>)" << "\n"
      << "<text transform=\"translate(20 " << kTop + f.height / 2
      << ") rotate(-90)\" text-anchor=\"middle\" fill=\"#1f77b4\">training loss</text>\n"
      << "<text transform=\"translate(" << kWidth - 20 << " " << kTop + f.height / 2
      << ") rotate(90)\" text-anchor=\"middle\" fill=\"#ff7f0e\">test accuracy</text>\n";
}

// The loss line, the accuracy line and a point at each evaluation.
void writeCurves(std::ostringstream& svg, const Frame& f, const std::vector<CurvePoint>& loss,
                 const std::vector<CurvePoint>& accuracy) {
  svg << R"(<polyline class="loss" fill="none" stroke="#1f77b4" stroke-width="1.5" points=")";
  for (const auto& p : loss) {
    if (!std::isfinite(p.value)) continue;
    svg << fixed(f.x(p.globalStep)) << "," << fixed(f.yLoss(p.value)) << " ";
  }
  svg << R"("/>)" << "\n";
  svg << R"(<polyline class="accuracy" fill="none" stroke="#ff7f0e" stroke-width="2" points=")";
  for (const auto& p : accuracy) {
    svg << fixed(f.x(p.globalStep)) << "," << fixed(f.yAccuracy(p.value)) << " ";
  }
  svg << R"("/>)" << "\n";
  for (const auto& p : accuracy) {
    svg << R"(<circle class="accuracy-point" cx=")" << fixed(f.x(p.globalStep)) << R"(" cy=")"
        << fixed(f.yAccuracy(p.value)) << R"(" r="3.5" fill="#ff7f0e" data-step=")"
        << p.globalStep << R"(" data-accuracy=")" << fixed(p.value, 4) << R"("/>)" << "\n";
  }
}

}  // namespace

std::string renderSvg(const TrainingCurve& curve, size_t maxPoints) {
  const auto loss = averageDown(curve.loss, maxPoints);
  const Frame frame = frameOf(loss, curve.accuracy);
  std::ostringstream svg;
  writeAxes(svg, frame);
  writeCurves(svg, frame, loss, curve.accuracy);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace pstrain::plot
