#define BOOST_TEST_MODULE progress
#include <boost/test/unit_test.hpp>

#include "pstrain/net/free_ports.hpp"
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

BOOST_AUTO_TEST_CASE(a_chosen_http_port_is_worker_0s_and_the_progress_line_follows_it) {
  TempDir logs;
  const std::string port = std::to_string(pstrain::net::freeLoopbackPorts(1)[0]);
  auto run =
      runCommand("script", {"-qec", localCommand(logs) + " --http-port " + port, "/dev/null"});
  BOOST_REQUIRE_MESSAGE(run.exitCode == 0, run.out + run.err);
  BOOST_TEST(run.out.find("worker 0's page: http://127.0.0.1:" + port + "/") != std::string::npos,
             run.out);
  // The line polls worker 0 there: it shows training, so worker 0 answered on that port.
  BOOST_TEST(run.out.find("\r\033[Ktraining: global step ") != std::string::npos, run.out);
}
