#define BOOST_TEST_MODULE progress
#include <boost/test/unit_test.hpp>

#include "support/idx_files.hpp"
#include "support/process_run.hpp"

// `pstrain local` shows a live progress line on a terminal and keeps logs free of it.

using namespace pstrain::testing;

namespace {

std::string localCommand(const TempDir& logs) {
  return pstrainBinary() +
         " local --ps 1 --workers 2 --data-dir " + kFashionMnistDir +
         " --train-steps 3000 --batch-size 50 --hidden-units 64 --log-dir " + logs.path();
}

}  // namespace

BOOST_AUTO_TEST_CASE(progress_line_is_rewritten_in_place_on_a_terminal) {
  TempDir logs;
  // script(1) gives the command a pseudo-terminal as its stdout.
  auto run = runCommand("script", {"-qec", localCommand(logs), "/dev/null"});
  BOOST_REQUIRE_MESSAGE(run.exitCode == 0, run.out + run.err);
  BOOST_TEST(run.out.find("\r\033[Ktraining: global step ") != std::string::npos, run.out);
  BOOST_TEST(run.out.find(" steps/s") != std::string::npos);
  BOOST_TEST(run.out.find("/3000 (") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(no_progress_line_when_output_is_not_a_terminal) {
  TempDir logs;
  auto run = runCommand("sh", {"-c", localCommand(logs)});
  BOOST_REQUIRE_MESSAGE(run.exitCode == 0, run.out + run.err);
  BOOST_TEST(run.out.find('\033') == std::string::npos);
  BOOST_TEST(run.out.find('\r') == std::string::npos);
  BOOST_TEST(run.out.find("global step 3000 in") != std::string::npos, run.out);
}
