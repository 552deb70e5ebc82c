#define BOOST_TEST_MODULE curve
#include <boost/test/unit_test.hpp>

#include <regex>
#include <sstream>

#include "support/idx_files.hpp"
#include "support/process_run.hpp"

// The training curve of a real run, rendered to PNG by a converter, as a person would view it.

using namespace pstrain::testing;

namespace {

std::vector<double> accuracyPoints(const std::string& svg) {
  std::regex point(R"re(data-step="(\d+)" data-accuracy="([0-9.]+)")re");
  std::vector<double> accuracy;
  for (std::sregex_iterator it(svg.begin(), svg.end(), point), end; it != end; ++it) {
    accuracy.push_back(std::stod((*it)[2]));
  }
  return accuracy;
}

}  // namespace

BOOST_AUTO_TEST_CASE(curve_of_a_real_run_renders_and_shows_accuracy_rising) {
  TempDir logs;
  auto run = runPstrain({"local", "--ps", "2", "--workers", "2", "--data-dir",
                         kFashionMnistDir, "--train-steps", "2000",
                         "--batch-size", "50", "--eval-every-steps", "100", "--log-dir",
                         logs.path(), "--log-every-steps", "5"});
  BOOST_REQUIRE_MESSAGE(run.exitCode == 0, run.out + run.err);
  auto svg = readText(logs.file("curve.svg"));
  auto accuracy = accuracyPoints(svg);
  BOOST_REQUIRE(accuracy.size() >= 5u);
  BOOST_TEST(accuracy.back() > accuracy.front(), "accuracy from " << accuracy.front() << " to "
                                                                   << accuracy.back());
  BOOST_TEST(accuracy.back() > 0.75);

  // `pstrain plot` draws the same from the log dirs (or a deploy.log standing for its dir).
  std::vector<std::string> plot{"plot", logs.file("ps-0/deploy.log"), "-o", logs.file("again.svg")};
  for (const auto& dir : {"ps-1", "worker-0", "worker-1"}) plot.push_back(logs.file(dir));
  auto again = runPstrain(plot);
  BOOST_REQUIRE_MESSAGE(again.exitCode == 0, again.out + again.err);
  BOOST_TEST(accuracyPoints(readText(logs.file("again.svg"))) == accuracy);

  auto render = runCommand("rsvg-convert", {"-o", logs.file("curve.png"), logs.file("curve.svg")});
  BOOST_REQUIRE_MESSAGE(render.exitCode == 0, render.err);
  auto measure = runCommand("identify", {"-format", "%w %h %[fx:standard_deviation]",
                                         logs.file("curve.png")});
  BOOST_REQUIRE_MESSAGE(measure.exitCode == 0, measure.err);
  std::istringstream numbers(measure.out);
  int width = 0;
  int height = 0;
  double deviation = 0;
  numbers >> width >> height >> deviation;
  BOOST_TEST(width == 800);
  BOOST_TEST(height == 450);
  BOOST_TEST(deviation > 0.05, "the picture is blank: pixel standard deviation " << deviation);
}
