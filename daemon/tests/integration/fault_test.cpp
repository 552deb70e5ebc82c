#define BOOST_TEST_MODULE fault
#include <boost/test/unit_test.hpp>

#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "pstrain/app/child_process.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/accuracy_cost.hpp"
#include "support/events.hpp"
#include "support/fault_proxy.hpp"
#include "support/history_checker.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// Processes killed, stopped and restarted while a local cluster trains.

using namespace pstrain::testing;

namespace {

// Enough steps that an asynchronous run clears 0.85 by more than its run-to-run noise (cluster_test).
constexpr int kSteps = 5000;

// The highest global step a ps of a `pstrain local` run (e.g. "ps-0") has recorded so far.
long psGlobalStep(const TempDir& logs, const std::string& name) {
  auto last = lastEventOf(logs.file(name), "step");  // a ps's steps only grow
  return last ? last->getValue<long>("step") : 0;
}

struct Run {
  double accuracy;
  long globalStep;
  std::string out;
};

// Synchronous runs are deterministic without faults (each step averages the same batches), so a
// fault's cost in accuracy shows against a baseline instead of hiding in asynchronous noise
// (about a point from run to run on a busy machine).
enum class Mode { kAsync, kSync };

// What every process of these runs is configured with.
std::vector<std::string> trainingSettings(Mode mode) {
  std::vector<std::string> args{"--ps", "2", "--workers", "2", "--data-dir", kFashionMnistDir,
                                "--train-steps", std::to_string(kSteps), "--batch-size", "100",
                                "--checkpoint-every-seconds", "0.2", "--record-history"};
  args.insert(args.end(), {"--sync", mode == Mode::kSync ? "true" : "false"});
  return args;
}

std::vector<std::string> localArgs(const TempDir& logs, Mode mode = Mode::kSync) {
  std::vector<std::string> args{"local"};
  for (auto& setting : trainingSettings(mode)) args.push_back(setting);
  for (const auto& arg : {std::string("--log-dir"), logs.path(), std::string("--summary-json"),
                          logs.file("summary.json")}) {
    args.push_back(arg);
  }
  return args;
}

Run summaryOf(const TempDir& logs, std::string out) {
  auto json = parseObject(readText(logs.file("summary.json")));
  return Run{json->getValue<double>("test_accuracy"), json->getValue<long>("global_step"),
             std::move(out)};
}

// `pstrain local` in the background, with `extraArgs`; `started` runs once it has started its
// children, and `duringRun` acts on it once ps-0 has passed `atStep`.
Run runLocalWith(const TempDir& logs, long atStep, const std::function<void()>& duringRun,
                 Mode mode = Mode::kSync, const std::vector<std::string>& extraArgs = {},
                 const std::function<void()>& started = [] {}) {
  std::vector<std::string> argv{pstrainBinary()};
  auto args = localArgs(logs, mode);
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
  pstrain::app::ChildProcess launcher(argv, logs.file("launcher.out"), logs.file("launcher.err"));
  started();
  BOOST_REQUIRE(waitFor([&] { return psGlobalStep(logs, "ps-0") >= atStep; },
                        std::chrono::seconds(60)));
  duringRun();
  BOOST_REQUIRE(waitFor([&] { return launcher.poll().has_value(); }, std::chrono::seconds(120)));
  BOOST_REQUIRE_MESSAGE(*launcher.poll() == 0, readText(logs.file("launcher.err")));
  return summaryOf(logs, readText(logs.file("launcher.out")));
}

// Signals the process that runs as `name` (e.g. "ps-1") of a `pstrain local` run: its PID is in
// the started event of its own record (the last one, if it was restarted).
void killChild(const TempDir& logs, const std::string& name, int signal) {
  auto started = eventsOf(logs.file(name), "started");
  BOOST_REQUIRE_MESSAGE(!started.empty(), "no started event in " << name << "/events.jsonl");
  const auto pid = pid_t(started.back()->getValue<long>("pid"));
  BOOST_REQUIRE_MESSAGE(::kill(pid, signal) == 0, "no process " << name << " to kill");
}

// Whether `pid` is a process that has not ended: a zombie (dead, not yet reaped by the launcher)
// has, and signalling it kills nothing.
bool alive(pid_t pid) {
  const std::string stat = readText("/proc/" + std::to_string(pid) + "/stat");
  const auto name = stat.rfind(')');  // the state follows the command name in parentheses
  return name != std::string::npos && name + 2 < stat.size() && stat[name + 2] != 'Z';
}

// What `pstrain local` (2 ps, 3 workers, asynchronous) did while a child chosen at random (seeded)
// was killed with SIGKILL every `period` until the run completed, or until one child had been
// killed `enough` times (0: no such limit).
struct KilledRun {
  Run run;
  int kills = 0;  // of live processes: a child in its restart delay is not hit
  std::map<std::string, int> restarts;  // the launcher's restarted events, per child
  double seconds = 0;
};

KilledRun runKillingEvery(const TempDir& logs, int steps, std::chrono::milliseconds period,
                          std::chrono::seconds limit, int enough = 0) {
  std::vector<std::string> argv{pstrainBinary()};
  auto args = localArgs(logs, Mode::kAsync);
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--workers", "3", "--train-steps", std::to_string(steps)});
  const auto start = std::chrono::steady_clock::now();
  pstrain::app::ChildProcess launcher(argv, logs.file("launcher.out"), logs.file("launcher.err"));
  const std::vector<std::string> children{"ps-0", "ps-1", "worker-0", "worker-1", "worker-2"};
  std::mt19937 random(38);
  KilledRun killed;
  std::map<std::string, int> kills;  // per child
  auto more = [&] {
    return enough == 0 || std::all_of(kills.begin(), kills.end(),
                                      [&](const auto& child) { return child.second < enough; });
  };
  for (auto next = start + period; !launcher.poll() && more(); next += period) {
    BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() - start < limit,
                          "not complete after " << limit.count() << " s");
    std::this_thread::sleep_until(next);  // the kills' schedule
    const auto& name = children[random() % children.size()];
    auto started = lastEventOf(logs.file(name), "started");  // its current process, if any
    if (started && alive(pid_t(started->getValue<long>("pid"))) &&
        ::kill(pid_t(started->getValue<long>("pid")), SIGKILL) == 0) {
      ++killed.kills;
      ++kills[name];
    }
  }
  BOOST_REQUIRE_MESSAGE(waitFor([&] { return launcher.poll().has_value(); }, limit),
                        "not complete after " << limit.count() << " s");
  killed.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_REQUIRE_MESSAGE(*launcher.poll() == 0, "exit status " << *launcher.poll() << ": "
                                                   << readText(logs.file("launcher.err"))
                                                   << readText(logs.file("launcher.out")));
  killed.run = summaryOf(logs, readText(logs.file("launcher.out")));
  for (const auto& restarted : eventsOf(logs.path(), "restarted")) {
    ++killed.restarts[restarted->getValue<std::string>("child")];
  }
  BOOST_TEST_MESSAGE(steps << " steps in " << killed.seconds << " s, accuracy "
                           << killed.run.accuracy << ", " << killed.kills << " kills");
  for (const auto& [child, count] : killed.restarts) {
    BOOST_TEST_MESSAGE(child << ": " << count << " restarts");
  }
  return killed;
}

// The run completed although a child was restarted more often than the ten times the launcher
// used to allow.
void checkRestartedThroughout(const KilledRun& killed, int steps) {
  int most = 0;
  for (const auto& [child, count] : killed.restarts) most = std::max(most, count);
  BOOST_TEST(most > 10);
  BOOST_TEST(killed.run.globalStep == steps);
  BOOST_TEST(killed.run.accuracy >= 0.84);
}

// The run's history, every child's in its log dir, breaks none of its invariants
// (testing::checkHistories).
void checkHistory(const TempDir& logs) {
  const auto segments = readHistories({logs.path()});
  BOOST_TEST(!segments.empty());
  const auto violations = checkHistories(segments);
  BOOST_TEST(violations.empty(), fmt::format("{}", fmt::join(violations, "\n")));
}

const Run& baseline() {
  static TempDir logs;
  static Run run = [] {
    auto result = runPstrain(localArgs(logs));
    BOOST_REQUIRE_MESSAGE(result.exitCode == 0, result.err);
    return summaryOf(logs, result.out);
  }();
  return run;
}

}  // namespace

BOOST_AUTO_TEST_CASE(kill_9_of_a_ps_costs_nothing_but_time) {
  TempDir logs;
  auto run = runLocalWith(logs, kSteps / 3, [&] { killChild(logs, "ps-1", SIGKILL); });
  auto restarted = eventsOf(logs.path(), "restarted");
  BOOST_REQUIRE(restarted.size() == 1u);
  BOOST_TEST(restarted[0]->getValue<std::string>("child") == "ps-1");
  BOOST_TEST(restarted[0]->getValue<int>("status") == 137);
  BOOST_TEST(eventsOf(logs.file("ps-1"), "restored").size() == 1u);
  BOOST_TEST(!eventsOf(logs.file("worker-0"), "reconnected").empty());
  BOOST_TEST(run.globalStep == kSteps);
  BOOST_TEST(accuracyCost(run.accuracy, baseline().accuracy) <= 0.01,
             "accuracy " << run.accuracy << " against " << baseline().accuracy << " unkilled");
  checkHistory(logs);
}

BOOST_AUTO_TEST_CASE(kill_9_of_a_worker_costs_nothing_but_time) {
  TempDir logs;
  auto run = runLocalWith(logs, kSteps / 3, [&] { killChild(logs, "worker-1", SIGKILL); });
  auto restarted = eventsOf(logs.path(), "restarted");
  BOOST_REQUIRE(restarted.size() == 1u);
  BOOST_TEST(restarted[0]->getValue<std::string>("child") == "worker-1");
  BOOST_TEST(restarted[0]->getValue<int>("status") == 137);
  // The restarted worker joins at the global step reached, and starts its local steps again.
  auto started = eventsOf(logs.file("worker-1"), "started");
  BOOST_REQUIRE_MESSAGE(started.size() == 2u, started.size() << " started events");
  auto connected = eventsOf(logs.file("worker-1"), "connected");
  BOOST_REQUIRE(connected.size() == 4u);  // to each of 2 ps, twice
  BOOST_TEST(connected.back()->getValue<long>("step") >= kSteps / 3);
  const double restartTime = started.back()->getValue<double>("time");
  long firstLocalStepAfter = 0;
  for (const auto& step : eventsOf(logs.file("worker-1"), "step")) {
    if (step->getValue<double>("time") < restartTime) continue;
    firstLocalStepAfter = step->getValue<long>("local_step");
    break;
  }
  BOOST_TEST(firstLocalStepAfter == 1);
  BOOST_TEST(run.globalStep == kSteps);
  // Until the new worker 1 connects, the sync steps average worker 0's gradient alone: about
  // 1,800 of the 5,000 steps on a quiet 2-core machine (6 runs: 0.879-0.886 against 0.884
  // unkilled), more where the restart waits for CPU (0.874 against 0.885 beside the test
  // command's builds). A restart that lost or corrupted state would cost far more.
  BOOST_TEST(accuracyCost(run.accuracy, baseline().accuracy) <= 0.015,
             "accuracy " << run.accuracy << " against " << baseline().accuracy << " unkilled");
  checkHistory(logs);
}

BOOST_AUTO_TEST_CASE(asynchronous_training_completes_through_a_kill_9_of_a_ps) {
  TempDir logs;
  auto run = runLocalWith(logs, kSteps / 3, [&] { killChild(logs, "ps-1", SIGKILL); },
                          Mode::kAsync);
  BOOST_TEST(eventsOf(logs.file("ps-1"), "restored").size() == 1u);
  BOOST_TEST(run.globalStep == kSteps);
  BOOST_TEST(run.accuracy >= 0.85);
  checkHistory(logs);
}

// The workers reach each ps through a fault proxy of the test support (`--ps-fronts`): latency
// with jitter on every connection throughout, then ps 1 paused as a whole process (SIGSTOP for
// 2 s, SIGCONT), then ps 0's connections reset in the middle of a frame.
BOOST_AUTO_TEST_CASE(a_ps_paused_and_its_connections_delayed_and_reset_cost_only_time) {
  TempDir logs;
  const auto fronts = pstrain::net::freeLoopbackPorts(2);
  std::vector<std::unique_ptr<FaultProxy>> proxies;  // outlive the run
  auto startProxies = [&] {
    for (int ps = 0; ps < 2; ++ps) {
      const auto name = "ps-" + std::to_string(ps);
      BOOST_REQUIRE(waitFor([&] { return lastEventOf(logs.file(name), "listening") != nullptr; },
                            std::chrono::seconds(30)));
      const auto port = lastEventOf(logs.file(name), "listening")->getValue<int>("port");
      proxies.push_back(std::make_unique<FaultProxy>(pstrain::net::Endpoint{"127.0.0.1", port},
                                                     38, fronts[size_t(ps)]));
      proxies.back()->setLatency(std::chrono::milliseconds(2), std::chrono::milliseconds(1));
    }
  };
  auto pauseThenReset = [&] {
    killChild(logs, "ps-1", SIGSTOP);
    // The pause is the fault: 2 s, in whose second half ps 0 takes no sync step without ps 1.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const long pausedAt = psGlobalStep(logs, "ps-0");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    BOOST_TEST(psGlobalStep(logs, "ps-0") == pausedAt, "sync steps went on without ps 1");
    killChild(logs, "ps-1", SIGCONT);
    const long resumedAt = psGlobalStep(logs, "ps-0");
    BOOST_REQUIRE(waitFor([&] { return psGlobalStep(logs, "ps-0") > resumedAt + 100; },
                          std::chrono::seconds(60)));
    proxies[0]->resetAfter(100000);  // a push is 400 KB: the reset cuts one in two
  };
  auto run = runLocalWith(logs, kSteps / 3, pauseThenReset, Mode::kSync,
                          {"--ps-fronts", std::to_string(fronts[0]) + "," +
                                              std::to_string(fronts[1])},
                          startProxies);
  BOOST_TEST(eventsOf(logs.path(), "restarted").empty());  // a paused ps is not a dead one
  BOOST_TEST(proxies[0]->resets() >= 1u);
  BOOST_TEST(!eventsOf(logs.file("worker-0"), "reconnected").empty());
  BOOST_TEST(run.globalStep == kSteps);
  BOOST_TEST(accuracyCost(run.accuracy, baseline().accuracy) <= 0.01,
             "accuracy " << run.accuracy << " against " << baseline().accuracy << " undisturbed");
  checkHistory(logs);
}

BOOST_AUTO_TEST_CASE(a_launcher_given_fronts_for_another_number_of_ps_says_so_in_one_line) {
  TempDir logs;
  auto args = localArgs(logs);
  args.insert(args.end(), {"--ps-fronts", "7001"});
  auto result = runPstrain(args, 30);
  BOOST_TEST(result.exitCode == pstrain::kExitConfig);
  auto errors = lines(result.err);
  BOOST_REQUIRE_MESSAGE(errors.size() == 1u, result.err);
  BOOST_TEST(contains(errors[0], "--ps-fronts names 1 ports for 2 ps"), errors[0]);
}

BOOST_AUTO_TEST_CASE(sigterm_of_everything_then_a_restart_continues_from_the_checkpoints) {
  TempDir logs;
  std::vector<std::string> argv{pstrainBinary()};
  auto args = localArgs(logs);
  argv.insert(argv.end(), args.begin(), args.end());
  {
    pstrain::app::ChildProcess launcher(argv, logs.file("first.out"), logs.file("first.err"));
    BOOST_REQUIRE(waitFor([&] { return psGlobalStep(logs, "ps-0") >= kSteps / 3; },
                          std::chrono::seconds(60)));
    launcher.stop(std::chrono::seconds(10));  // SIGTERM: the launcher stops every child with it
  }
  const long stoppedAt = psGlobalStep(logs, "ps-0");
  BOOST_TEST(stoppedAt < kSteps);
  // A child that the stop ended is not taken for one that died.
  BOOST_TEST(eventsOf(logs.path(), "restarted").empty());
  auto stopped = eventsOf(logs.file("ps-0"), "stopped");
  BOOST_REQUIRE(stopped.size() == 1u);
  BOOST_TEST(stopped[0]->getValue<std::string>("signal") == "SIGTERM");
  auto checkpoints = eventsOf(logs.file("ps-0"), "checkpoint");
  BOOST_REQUIRE(!checkpoints.empty());
  auto lastCheckpoint = checkpoints.back();

  auto result = runPstrain(args);
  BOOST_REQUIRE_MESSAGE(result.exitCode == 0, result.err);
  auto restored = eventsOf(logs.file("ps-0"), "restored");
  BOOST_REQUIRE(restored.size() == 1u);
  // SIGTERM wrote a last checkpoint: nothing applied before the stop was lost.
  BOOST_TEST(restored[0]->getValue<long>("step") >= stoppedAt);
  BOOST_TEST(restored[0]->getValue<long>("step") == lastCheckpoint->getValue<long>("step"));
  BOOST_TEST(summaryOf(logs, "").globalStep == kSteps);
  checkHistory(logs);
}

BOOST_AUTO_TEST_CASE(a_pod_restarted_after_completion_does_not_train_again) {
  TempDir logs;  // declared first: outlives the processes below
  auto result = runPstrain(localArgs(logs));
  BOOST_REQUIRE_MESSAGE(result.exitCode == 0, result.err);
  auto restart = [&](const std::string& role) {
    std::string dir = logs.file(role + "-1");
    std::vector<std::string> argv{pstrainBinary(), "run"};
    auto settings = trainingSettings(Mode::kSync);
    argv.insert(argv.end(), settings.begin(), settings.end());
    auto ports = pstrain::net::freeLoopbackPorts(2);
    std::vector<std::string> placement{"--role", role, "--index", "1", "--ps-hosts",
                                       "127.0.0.1:1,127.0.0.1:2", "--ps-port",
                                       std::to_string(ports[0]), "--worker-port",
                                       std::to_string(ports[0]), "--http-port",
                                       std::to_string(ports[1]), "--log-dir", dir, "--auth-key-file",
                                       logs.file("auth.key"), "--log-to-stdout", "false"};
    argv.insert(argv.end(), placement.begin(), placement.end());
    return std::make_unique<pstrain::app::ChildProcess>(argv, "/dev/null", dir + "/stderr.log");
  };
  auto worker = restart("worker");
  BOOST_TEST(waitFor(
      [&] {
        auto found = lastEventOf(logs.file("worker-1"), "already_completed");
        return found && found->getValue<long>("step") == kSteps;
      },
      std::chrono::seconds(20)));
  auto ps = restart("ps");
  BOOST_TEST(waitFor([&] {
                       auto restored = lastEventOf(logs.file("ps-1"), "restored");
                       return restored && restored->getValue<long>("step") == kSteps &&
                              restored->getValue<bool>("completed");
                     },
                     std::chrono::seconds(20)));
  BOOST_TEST(!worker->poll().has_value());  // idle, not exited
}

// The kills stop once a child has been killed 11 times (about 14 s): the run is long enough to
// be under way then on a fast machine, and takes its last steps after them.
BOOST_AUTO_TEST_CASE(a_child_killed_every_quarter_second_until_the_run_completes_costs_only_time) {
  TempDir logs;
  constexpr int kKilledSteps = 6 * kSteps;
  auto killed = runKillingEvery(logs, kKilledSteps, std::chrono::milliseconds(250),
                                std::chrono::seconds(300), 11);
  checkRestartedThroughout(killed, kKilledSteps);
  checkHistory(logs);
}

// The run of docs/faults.md, too long for CI: run it by name (tests/bench/repeated_kills.sh).
BOOST_AUTO_TEST_CASE(a_child_killed_every_second_through_100000_steps,
                     *boost::unit_test::disabled()) {
  TempDir logs;
  constexpr int kKilledSteps = 100000;
  auto killed = runKillingEvery(logs, kKilledSteps, std::chrono::milliseconds(1000),
                                std::chrono::seconds(2400));
  checkRestartedThroughout(killed, kKilledSteps);
  checkHistory(logs);
}

BOOST_AUTO_TEST_CASE(a_child_that_fails_at_start_up_stops_the_launcher_with_one_line) {
  TempDir logs;
  std::filesystem::create_directories(logs.file("ps-1"));
  writeFile(logs.file("ps-1/checkpoint.bin"), "not a checkpoint");
  auto result = runPstrain(localArgs(logs), 60);
  BOOST_TEST(result.exitCode == pstrain::kExitIo);
  auto errors = lines(result.err);
  BOOST_REQUIRE_MESSAGE(errors.size() == 1u, result.err);
  BOOST_TEST(contains(errors[0], "ps-1 exited with status 5"), errors[0]);
  BOOST_TEST(contains(errors[0], "checkpoint.bin"), errors[0]);
  // Started five times, each after a longer delay, before the launcher gave up.
  std::vector<double> delays;
  for (const auto& restarted : eventsOf(logs.path(), "restarted")) {
    delays.push_back(restarted->getValue<double>("delay_s"));
  }
  BOOST_TEST(delays == (std::vector<double>{0.25, 0.5, 1, 2}), boost::test_tools::per_element());
}
