#define BOOST_TEST_MODULE supervisor
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pstrain/app/child_process.hpp"
#include "pstrain/observe/events.hpp"
#include "support/events.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// How `pstrain local` starts a child again that dies: real processes, worker 1 killed with
// SIGKILL (as the OOM killer would) at a chosen point of each of its runs.

using namespace pstrain::testing;
using Events = std::vector<Poco::JSON::Object::Ptr>;

namespace {

// 1 ps and 2 workers on a small synthetic data set: worker 0 trains throughout.
struct Launch {
  TempDir data;
  TempDir logs;
  std::unique_ptr<pstrain::app::ChildProcess> launcher;

  explicit Launch(const std::string& steps) {
    writeSyntheticMnist(data.path(), 6000, 1000, true);
    std::vector<std::string> argv{pstrainBinary(), "local", "--ps", "1", "--workers", "2",
                                  "--data-dir", data.path(), "--train-steps", steps,
                                  "--batch-size", "50", "--hidden-units", "32", "--log-dir",
                                  logs.path(), "--summary-json", logs.file("summary.json")};
    launcher = std::make_unique<pstrain::app::ChildProcess>(argv, logs.file("local.out"),
                                                            logs.file("local.err"));
  }
  bool running() { return !launcher->poll().has_value(); }
};

std::string nameOf(const Poco::JSON::Object::Ptr& event) {
  return event->getValue<std::string>("event");
}

// The events of the child's current run, from its last `started` event on.
Events currentRun(const std::string& dir) {
  const auto path = dir + "/" + pstrain::observe::kEventsFile;
  if (!std::filesystem::exists(path)) return {};
  auto events = pstrain::observe::readEvents(path);
  auto started = std::find_if(events.rbegin(), events.rend(),
                              [](const auto& event) { return nameOf(event) == "started"; });
  if (started == events.rend()) return {};
  return Events(std::prev(started.base()), events.end());
}

// Kills the child's current run with SIGKILL once `due` holds for its events; returns whether it
// did before `give` held or 60 s passed. `killed`: the PID it killed last, whose events stay
// the current run's until the launcher starts the child again.
template <typename Due, typename Give>
bool killWhen(const std::string& dir, long& killed, Due due, Give give) {
  long pid = 0;
  const bool found = waitFor(
      [&] {
        if (give()) return true;
        const auto run = currentRun(dir);
        if (run.empty() || run.front()->getValue<long>("pid") == killed || !due(run)) {
          return false;
        }
        pid = run.front()->getValue<long>("pid");
        return true;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(2));
  if (!found || pid == 0 || ::kill(pid_t(pid), SIGKILL) != 0) return false;
  killed = pid;
  return true;
}

// The delays of the launcher's restarts of `child`, in seconds.
std::vector<double> restartDelays(const std::string& logs, const std::string& child) {
  std::vector<double> delays;
  for (const auto& restarted : eventsOf(logs, "restarted")) {
    BOOST_TEST(restarted->getValue<std::string>("child") == child);
    delays.push_back(restarted->getValue<double>("delay_s"));
  }
  return delays;
}

}  // namespace

// A worker reports `training` as soon as it connects: the launcher started one that connected
// and died at once again every 0.25 s without end. Now such runs count as making no step.
BOOST_AUTO_TEST_CASE(a_worker_that_connects_and_dies_at_once_backs_off_to_the_cap_within_10_s) {
  Launch cluster("100000000");  // never completes: stopped below
  const auto worker = cluster.logs.file("worker-1");
  auto crashLoop = [&] { return lastEventOf(cluster.logs.path(), "crash_loop"); };
  auto connected = [](const Events& run) {
    return std::any_of(run.begin(), run.end(),
                       [](const auto& event) { return nameOf(event) == "connected"; });
  };
  auto over = [&] { return crashLoop() != nullptr || !cluster.running(); };
  int kills = 0;
  long killed = 0;
  for (int tries = 0; tries < 20 && !over(); ++tries) {
    kills += killWhen(worker, killed, connected, over);
  }
  BOOST_REQUIRE_MESSAGE(cluster.running(), readText(cluster.logs.file("local.err")));
  const auto reported = crashLoop();
  BOOST_TEST(reported->getValue<std::string>("child") == "worker-1");
  BOOST_TEST(reported->getValue<int>("runs") == 5);
  BOOST_TEST(reported->getValue<double>("delay_s") == 4);
  BOOST_TEST(kills == 5);
  const double firstStart = eventsOf(worker, "started").front()->getValue<double>("time");
  const double took = reported->getValue<double>("time") - firstStart;
  BOOST_TEST_MESSAGE("backed off to the cap " << took << " s after worker-1 first started");
  BOOST_TEST(took <= 10);
  BOOST_TEST(restartDelays(cluster.logs.path(), "worker-1") ==
                 (std::vector<double>{0.25, 0.5, 1, 2, 4}),
             boost::test_tools::per_element());
  cluster.launcher->stop(std::chrono::seconds(10));
  BOOST_TEST(*cluster.launcher->poll() == 128 + SIGTERM);
  const auto out = readText(cluster.logs.file("local.out"));
  BOOST_TEST(contains(out, "worker-1 made no step in its last 5 runs: it is started again only "
                           "every 4 s until one does (CrashLoopBackOff)"),
             out);
}

// Each run of worker 1 trains for a tenth of a second (steps in it a tenth of a second apart),
// then is killed: every restart comes after the first delay, however many there are, and the run
// ends at exactly its last step. (Half a second, and the 8 kills outlasted a fast machine's run.)
BOOST_AUTO_TEST_CASE(a_worker_killed_each_time_it_has_made_steps_is_restarted_at_once_without_limit) {
  constexpr int kKills = 8;  // beyond the five stepless runs that reach the cap
  const std::string steps = "60000";
  Launch cluster(steps);
  const auto worker = cluster.logs.file("worker-1");
  auto trained = [](const Events& run) {
    std::vector<double> times;
    for (const auto& event : run) {
      if (nameOf(event) == "step") times.push_back(event->getValue<double>("time"));
    }
    return !times.empty() && times.back() - times.front() >= 0.1;
  };
  auto ended = [&] { return !cluster.running(); };
  int kills = 0;
  long killed = 0;
  while (kills < kKills && killWhen(worker, killed, trained, ended)) ++kills;
  BOOST_TEST(kills == kKills, "the run ended after " << kills << " kills");
  BOOST_REQUIRE(waitFor(ended, std::chrono::seconds(120)));
  BOOST_REQUIRE_MESSAGE(*cluster.launcher->poll() == 0, readText(cluster.logs.file("local.err")));
  const auto summary = parseObject(readText(cluster.logs.file("summary.json")));
  BOOST_TEST(summary->getValue<long>("global_step") == std::stol(steps));
  BOOST_TEST(restartDelays(cluster.logs.path(), "worker-1") == std::vector<double>(kills, 0.25),
             boost::test_tools::per_element());
  BOOST_TEST(eventsOf(cluster.logs.path(), "crash_loop").empty());
}
