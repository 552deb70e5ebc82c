#define BOOST_TEST_MODULE progress
#include <boost/test/unit_test.hpp>

#include <ctime>
#include <iomanip>
#include <regex>
#include <sstream>

#include "pstrain/app/child_process.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/idx_files.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// `pstrain local` shows a live progress line on a terminal, and elsewhere a plain log line every
// ten seconds, free of terminal codes.

using namespace pstrain::testing;

namespace {

std::string localCommand(const TempDir& logs) {
  return pstrainBinary() +
         " local --ps 1 --workers 2 --data-dir " + kFashionMnistDir +
         " --train-steps 3000 --batch-size 50 --hidden-units 64 --log-dir " + logs.path();
}

// The time of a log line, "[2026-11-21 11:30:43.153587] ...", in seconds since the epoch.
double timeOf(const std::string& line) {
  std::tm time{};
  std::istringstream in(line.substr(1, 19));
  in >> std::get_time(&time, "%Y-%m-%d %H:%M:%S");
  BOOST_REQUIRE_MESSAGE(!in.fail(), "no time at the start of " << line);
  time.tm_isdst = -1;
  return double(std::mktime(&time)) + std::stod("0" + line.substr(20, 7));
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

BOOST_AUTO_TEST_CASE(no_terminal_codes_when_output_is_not_a_terminal) {
  TempDir logs;
  auto run = runCommand("sh", {"-c", localCommand(logs)});
  BOOST_REQUIRE_MESSAGE(run.exitCode == 0, run.out + run.err);
  BOOST_TEST(run.out.find('\033') == std::string::npos);
  BOOST_TEST(run.out.find('\r') == std::string::npos);
  BOOST_TEST(run.out.find("global step 3000 in") != std::string::npos, run.out);
}

// Off a terminal the first line came at about 20 s (the first answer, at the start, was dropped
// and worker 0 was seldom serving then), so a run of 18 s printed none, and the line had no time.
BOOST_AUTO_TEST_CASE(off_a_terminal_a_line_with_its_time_comes_every_ten_seconds_from_the_start) {
  TempDir logs;
  std::vector<std::string> argv{pstrainBinary(), "local", "--ps", "1", "--workers", "1",
                                "--data-dir", kFashionMnistDir, "--train-steps", "100000000",
                                "--hidden-units", "64", "--log-dir", logs.path()};
  pstrain::app::ChildProcess launcher(argv, logs.file("local.out"), logs.file("local.err"));
  const std::regex progress(
      R"(^\[[-0-9: .]{26}\] \[local\] training: global step \d+/100000000 )");
  std::vector<std::string> shown;
  const bool twoLines = waitFor([&] {
    shown.clear();
    for (const auto& line : lines(readText(logs.file("local.out")))) {
      if (std::regex_search(line, progress)) shown.push_back(line);
    }
    return shown.size() >= 2 || launcher.poll();
  }, std::chrono::seconds(60), std::chrono::milliseconds(100));
  const std::string out = readText(logs.file("local.out"));
  launcher.stop(std::chrono::milliseconds(10000));
  BOOST_REQUIRE_MESSAGE(twoLines && shown.size() >= 2, "two progress lines within 60 s: " << out);
  // The start: the line before the progress lines begin, "started 1 ps and 1 workers ...".
  const auto all = lines(out);
  const auto start = std::find_if(all.begin(), all.end(), [](const std::string& line) {
    return contains(line, "] [local] started 1 ps and 1 workers on loopback");
  });
  BOOST_REQUIRE_MESSAGE(start != all.end(), out);
  const double first = timeOf(shown[0]) - timeOf(*start);
  const double second = timeOf(shown[1]) - timeOf(shown[0]);
  BOOST_TEST((first >= 9.9 && first < 11.5), "the first line " << first << " s after the start");
  BOOST_TEST((second > 9 && second < 11), "the second line " << second << " s after the first");
  BOOST_TEST(out.find('\033') == std::string::npos);
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
