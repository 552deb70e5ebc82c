#define BOOST_TEST_MODULE training_curve
#include <boost/test/unit_test.hpp>

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

BOOST_AUTO_TEST_CASE(unreadable_events_file_is_an_io_error) {
  BOOST_CHECK_THROW(readTrainingCurve({"/nonexistent/events.jsonl"}), pstrain::IoError);
}
