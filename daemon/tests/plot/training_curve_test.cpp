#define BOOST_TEST_MODULE training_curve
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <regex>

#include "pstrain/common/error.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/plot/training_curve.hpp"
#include "support/idx_files.hpp"

using namespace pstrain::plot;
using pstrain::observe::Events;
namespace event = pstrain::observe::event;
using pstrain::observe::State;
using pstrain::testing::TempDir;

BOOST_AUTO_TEST_CASE(reads_loss_from_ps_steps_and_accuracy_at_its_global_step) {
  TempDir dir;
  {
    Events ps("ps", 0, dir.file("ps.jsonl"));
    ps.emit(event::state(State::kTraining));
    ps.emit(event::psStep(0, 1, 0, 1, 2.3f, 0));
    ps.emit(event::psStep(0, 2, 1, 1, 1.5f, 0));
    Events worker("worker", 0, dir.file("worker.jsonl"));
    // A worker's loss is its own batch's: not plotted.
    worker.emit(event::workerStep(0, 1, 1, 9.0f));
    worker.emit(event::workerStep(0, 3, 2, 9.0f));
    worker.emit(event::accuracy(2, 3, 0.75, 1.0e9));
  }
  auto curve = readTrainingCurve({dir.file("ps.jsonl"), dir.file("worker.jsonl")});
  BOOST_REQUIRE(curve.loss.size() == 2u);
  BOOST_TEST(curve.loss[1].globalStep == 2u);
  BOOST_TEST(curve.loss[1].value == 1.5);
  BOOST_REQUIRE(curve.accuracy.size() == 1u);
  BOOST_TEST(curve.accuracy[0].globalStep == 3u);
  BOOST_TEST(curve.accuracy[0].value == 0.75);
}

BOOST_AUTO_TEST_CASE(svg_keeps_every_accuracy_point_and_thins_the_loss) {
  TrainingCurve curve;
  for (std::uint64_t step = 1; step <= 5000; ++step) curve.loss.push_back({step, 1.0 / double(step)});
  curve.accuracy = {{1000, 0.5}, {5000, 0.9}};
  auto svg = renderSvg(curve, 100);
  std::regex point(R"re(data-step="(\d+)" data-accuracy="([0-9.]+)")re");
  std::vector<std::string> steps;
  for (std::sregex_iterator it(svg.begin(), svg.end(), point), end; it != end; ++it) {
    steps.push_back((*it)[1]);
  }
  BOOST_TEST(steps == (std::vector<std::string>{"1000", "5000"}));
  std::smatch loss;
  BOOST_REQUIRE(std::regex_search(svg, loss, std::regex(R"re(class="loss"[^>]*points="([^"]*)")re")));
  std::string points = loss[1];
  BOOST_TEST(std::count(points.begin(), points.end(), ',') == 100);
  BOOST_TEST(svg.find("global step</text>") != std::string::npos);
  BOOST_TEST(svg.find("test accuracy</text>") != std::string::npos);
}

// The untrained model's loss, about ln 10 = 2.3, falls within a few dozen steps: averaged with
// the steps after it, it was drawn as 1.25 and the axis ended there.
BOOST_AUTO_TEST_CASE(the_loss_axis_holds_the_first_loss_drawn_at_its_value) {
  TrainingCurve curve;
  for (std::uint64_t step = 1; step <= 10000; ++step) {
    curve.loss.push_back({step, 0.3 + 2.0 * std::exp(-double(step - 1) / 10)});
  }
  auto svg = renderSvg(curve);
  // The loss axis's labels, on the left: value and height.
  std::regex tick(R"re(<text x="64" y="([0-9.]+)" text-anchor="end">([0-9.]+)</text>)re");
  std::vector<std::pair<double, double>> ticks;  // value, y
  for (std::sregex_iterator it(svg.begin(), svg.end(), tick), end; it != end; ++it) {
    ticks.emplace_back(std::stod((*it)[2]), std::stod((*it)[1]) - 4);  // labels sit 4 px low
  }
  BOOST_REQUIRE(ticks.size() >= 2u);
  BOOST_TEST(ticks.back().first >= 2.3, "the loss axis ends at " << ticks.back().first);
  // The height of a loss, from the first and last labels.
  auto y = [&](double loss) {
    return ticks.front().second + (loss - ticks.front().first) *
                                      (ticks.back().second - ticks.front().second) /
                                      (ticks.back().first - ticks.front().first);
  };
  std::smatch loss;
  BOOST_REQUIRE(
      std::regex_search(svg, loss, std::regex(R"re(class="loss"[^>]*points="[0-9.]+,([0-9.]+) )re")));
  BOOST_TEST(std::abs(std::stod(loss[1]) - y(2.3)) < 1.0,
             "the first loss point is at y " << loss[1] << "; 2.3 is at " << y(2.3));
}

BOOST_AUTO_TEST_CASE(unreadable_events_file_is_an_io_error) {
  BOOST_CHECK_THROW(readTrainingCurve({"/nonexistent/events.jsonl"}), pstrain::IoError);
}
