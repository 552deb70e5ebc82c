#define BOOST_TEST_MODULE recut_kill
#include <boost/test/unit_test.hpp>

#include <fmt/ranges.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "pstrain/app/child_process.hpp"
#include "support/events.hpp"
#include "support/history_checker.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// Worker 0 killed inside a re-cut: `pstrain local` processes over TCP on Fashion-MNIST, the ps
// going from 2 to 3, or from 3 to 2, early in the run (SIGRTMIN, SIGRTMIN+1). Worker 0's
// failpoint (PSTRAIN_FAILPOINTS, common/failpoint.hpp) sends it SIGKILL at one point of the
// re-cut; the launcher starts it again, without the failpoint, and it finds the ps frozen, some
// holding their slice of the new cut or serving it. Whatever the point, the run ends at exactly
// its last step, no re-cut lost state, and the run's history breaks no invariant, values
// included. (The accuracy beside an uninterrupted twin's is a benchmark's, in medians:
// tests/bench/recut_kill.sh; two sync runs of the same settings differ by up to 0.01.)

using namespace pstrain::testing;

namespace {

// Worker 0 reads the settings every second: the run goes on for seconds after the signal.
constexpr int kTrainSteps = 10000;

struct Run {
  int worker0Restarts = 0;
  int lastCutPs = 0;  // the ps count of the last cut ps 0 served
  std::vector<std::uint64_t> lostState;  // of each re-cut worker 0 made, in both its lives
  std::vector<std::string> violations;
};

// A run from `fromPs` ps to `toPs`, with `failpoints` set (none: "").
Run recutRun(int fromPs, int toPs, const std::string& failpoints) {
  TempDir logs;
  std::vector<std::string> argv{"/usr/bin/env", "PSTRAIN_FAILPOINTS=" + failpoints,
                                pstrainBinary(), "local", "--ps", std::to_string(fromPs),
                                "--workers", "2", "--data-dir", kFashionMnistDir,
                                "--train-steps", std::to_string(kTrainSteps), "--eval-every-steps",
                                "0", "--record-history", "--log-dir", logs.path(),
                                "--summary-json", logs.file("summary.json")};
  pstrain::app::ChildProcess launcher(argv, logs.file("local.out"), logs.file("local.err"));
  const auto ps0 = logs.file("ps-0");
  BOOST_REQUIRE(waitFor(
      [&] {
        const auto step = lastEventOf(ps0, "step");
        return step && step->getValue<int>("step") >= 300;
      },
      std::chrono::seconds(60)));
  BOOST_REQUIRE(::kill(launcher.pid(), toPs > fromPs ? SIGRTMIN : SIGRTMIN + 1) == 0);
  BOOST_REQUIRE(waitFor([&] { return launcher.poll().has_value(); }, std::chrono::seconds(120)));
  BOOST_REQUIRE_MESSAGE(*launcher.poll() == 0, readText(logs.file("local.err")));
  const auto summary = parseObject(readText(logs.file("summary.json")));
  BOOST_TEST(summary->getValue<int>("global_step") == kTrainSteps);
  Run run;
  for (const auto& restarted : eventsOf(logs.path(), "restarted")) {
    if (restarted->getValue<std::string>("child") == "worker-0") ++run.worker0Restarts;
  }
  if (const auto cut = lastEventOf(ps0, "cut")) run.lastCutPs = cut->getValue<int>("ps_count");
  for (const auto& recut : eventsOf(logs.file("worker-0"), "recut")) {
    run.lostState.push_back(recut->getValue<std::uint64_t>("lost_state"));
  }
  run.violations = checkHistories(readHistories({logs.path()}));
  return run;
}

void expectNothingLost(int fromPs, int toPs, const std::string& failpoint) {
  const auto killed = recutRun(fromPs, toPs, failpoint);
  BOOST_TEST_MESSAGE(fromPs << " -> " << toPs << " ps, " << failpoint << ": lost state "
                            << fmt::format("{}", killed.lostState));
  BOOST_TEST(killed.worker0Restarts == 1, failpoint << " did not kill worker 0 once");
  BOOST_TEST(killed.lastCutPs == toPs, "ps 0 serves a cut of " << killed.lastCutPs << " ps");
  for (const auto lost : killed.lostState) BOOST_TEST(lost == 0u);
  BOOST_TEST(killed.violations.empty(), fmt::format("{}", fmt::join(killed.violations, "\n")));
}

// Where in a re-cut worker 0 dies: after it took the slices of 2 of the 3 ps it froze, gave 2 ps
// their new slices, told 1 or 2 ps to serve theirs, or told all and has not recorded it (then
// the worker 0 started again finds the new cut served, and records no re-cut).
const std::vector<std::string> kKills{
    "recut.after-freeze=1+1*kill", "recut.after-prepare=1+1*kill", "recut.after-commit=1*kill",
    "recut.after-commit=1+1*kill", "recut.before-report=1*kill"};

}  // namespace

BOOST_AUTO_TEST_CASE(worker_0_killed_anywhere_in_a_recut_to_more_ps_loses_nothing) {
  for (const auto& kill : kKills) expectNothingLost(2, 3, kill);
}

BOOST_AUTO_TEST_CASE(worker_0_killed_anywhere_in_a_recut_to_fewer_ps_loses_nothing) {
  for (const auto& kill : kKills) expectNothingLost(3, 2, kill);
}
