#define BOOST_TEST_MODULE planted_faults
#include <boost/test/unit_test.hpp>

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/idx_files.hpp"
#include "support/in_process_cluster.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// Planted faults: each failpoint that makes a run wrong on purpose (common/failpoint.hpp) is
// turned on for a short run, and the run's history checker must flag the invariant that fault
// breaks; a fault it misses fails the case. The same runs without a fault come out clean. The ps
// and workers are threads of this process (testing::InProcessCluster), so the failpoints they
// hit are this process's.

using namespace pstrain;
using namespace pstrain::testing;

namespace {

// Long enough that worker 0, which reads the settings every 10 ms, re-cuts well before the end.
constexpr int kTrainSteps = 1500;

std::vector<std::string> flags(bool sync, int trainSteps) {
  return {"--ps", "2", "--workers", "2", "--train-steps", std::to_string(trainSteps),
          "--batch-size", "20", "--hidden-units", "16", "--eval-every-steps", "0",
          "--peer-timeout-seconds", "10", "--sync", sync ? "true" : "false",
          "--record-history"};
}

// A run re-cut from 2 ps to 3 from global step 100: the violations of its history.
std::vector<std::string> recutRun(bool sync) {
  InProcessCluster cluster(Transport::kLoopback, flags(sync, kTrainSteps));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return cluster.server(0).globalStep() >= 100; },
                        std::chrono::seconds(30)));
  cluster.startPs(2);
  cluster.setPsCount(3);
  BOOST_REQUIRE(waitFor([&] { return !cluster.workerReports(0).eventsNamed("recut").empty(); },
                        std::chrono::seconds(30)));
  BOOST_REQUIRE(cluster.server(0).globalStep() < std::uint64_t(kTrainSteps));
  cluster.joinWorkers();
  return cluster.checkHistory();
}

// A sync run of 4 steps in which worker 0's channel breaks while its push waits at the barrier:
// it reconnects, pulls and pushes again, and worker 1 pushes once worker 0's second push has come
// or a second has passed since its pull (in_process_test shows the ps holding that pull until
// the step is taken, so that the push comes after it). The violations of its history.
std::vector<std::string> reconnectAtTheBarrier() {
  InProcessCluster cluster(Transport::kTcp, {"--ps", "1", "--workers", "2", "--train-steps", "4",
                                             "--batch-size", "20", "--hidden-units", "16",
                                             "--peer-timeout-seconds", "10", "--sync", "true",
                                             "--record-history"});
  std::atomic<int> pulls{0}, pushes{0};  // that reached the ps
  cluster.startPs(0, [&](const net::Incoming& frame) {
    if (frame.type == net::MessageType::kPull) ++pulls;
    if (frame.type == net::MessageType::kPush) ++pushes;
  });
  auto worker0 = cluster.client(0);
  worker0->connect();
  auto worker1 = cluster.client(1);
  worker1->connect();
  std::vector<float> gradient(
      model::Layout::mnist(cluster.settings().hiddenUnits).parameterCount(), 1e-3f);
  std::vector<float> params1(gradient.size());
  worker1->pull(params1.data());  // a member of the barrier from its first request on
  auto train = [&](ps::Client& worker, std::uint64_t from) {
    std::vector<float> params(gradient.size());
    for (auto step = from; !worker.done(); ++step) {
      if (!worker.pushPull(ps::Gradient(gradient.data()), params.data(), step, 0).applied &&
          step > from) {
        break;
      }
    }
  };
  const int pullsBefore = pulls;
  std::thread worker0Trains([&] { train(*worker0, 1); });
  BOOST_REQUIRE(waitFor([&] { return cluster.server(0).syncArrivals() == 1; },
                        std::chrono::seconds(10)));
  cluster.cutOff(0);
  cluster.restore(0);
  BOOST_REQUIRE(waitFor([&] { return pulls > pullsBefore; }, std::chrono::seconds(10)));
  waitFor([&] { return pushes >= 2; }, std::chrono::seconds(1));
  train(*worker1, 1);
  worker0Trains.join();
  return cluster.checkHistory();
}

std::string listed(const std::vector<std::string>& violations) {
  return violations.empty() ? "none" : fmt::format("{}", fmt::join(violations, "\n"));
}

void expectClean(const std::vector<std::string>& violations) {
  BOOST_TEST(violations.empty(), "violations: " << listed(violations));
}

// Runs `run` with failpoint `name` set to `setting`: the failpoint must act, and the checker must
// flag `invariant`.
void expectCaught(const std::string& name, const std::string& setting,
                  const std::function<std::vector<std::string>()>& run,
                  const std::string& invariant) {
  failpoint::Scoped planted(name, setting);
  const auto violations = run();
  BOOST_TEST_MESSAGE(name << "=" << setting << ": " << listed(violations));
  BOOST_TEST(failpoint::triggered(name) > 0u, name << " was never hit");
  const bool caught = std::any_of(violations.begin(), violations.end(), [&](const auto& v) {
    return v.rfind(invariant + ": ", 0) == 0;
  });
  BOOST_TEST(caught, name << "=" << setting << " went past the checker, which flagged: "
                          << listed(violations));
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_runs_without_a_planted_fault_are_clean) {
  expectClean(recutRun(false));
  expectClean(recutRun(true));
  expectClean(reconnectAtTheBarrier());
}

BOOST_AUTO_TEST_CASE(a_recut_that_zeroes_state_is_caught) {
  expectCaught("recut.install", "zero", [] { return recutRun(false); }, "recut-values");
}

BOOST_AUTO_TEST_CASE(an_install_that_loses_a_range_is_caught) {
  expectCaught("recut.install", "1*drop(40)", [] { return recutRun(true); }, "recut-values");
}

BOOST_AUTO_TEST_CASE(a_push_applied_twice_is_caught) {
  expectCaught("ps.after-apply", "3*again", [] { return recutRun(false); }, "push-once");
}

BOOST_AUTO_TEST_CASE(a_step_skipped_is_caught) {
  expectCaught("shard.step", "1*skip", [] { return recutRun(false); }, "step-sequence");
}

BOOST_AUTO_TEST_CASE(a_sync_worker_counted_twice_is_caught) {
  expectCaught("shard.sync-barrier", "skip", reconnectAtTheBarrier, "sync-worker-once");
}

// PSTRAIN_FAILPOINTS reaches a `pstrain run` process: a ps killed between its first
// checkpoint's write and its rename leaves the temporary file and no checkpoint.
BOOST_AUTO_TEST_CASE(the_environment_sets_failpoints_in_a_pstrain_process) {
  TempDir data, logs;
  writeSyntheticMnist(data.path(), 600, 100, false);
  const auto ports = net::freeLoopbackPorts(2);
  const std::vector<std::string> ps{
      "run", "--role", "ps", "--index", "0", "--ps-hosts",
      "127.0.0.1:" + std::to_string(ports[0]), "--ps-port", std::to_string(ports[0]),
      "--http-port", std::to_string(ports[1]), "--data-dir", data.path(), "--log-dir",
      logs.path(), "--checkpoint-every-seconds", "0.1", "--log-to-stdout", "false"};
  auto withFailpoints = [&](const std::string& spec) {
    std::vector<std::string> args{"PSTRAIN_FAILPOINTS=" + spec, pstrainBinary()};
    args.insert(args.end(), ps.begin(), ps.end());
    return runCommand("env", args, 30);
  };
  const auto killed = withFailpoints("checkpoint.before-rename=kill");
  BOOST_TEST((killed.exitCode == 128 + SIGKILL || killed.exitCode == 256 + SIGKILL),
             "exit code " << killed.exitCode << ", stderr: " << killed.err);
  BOOST_TEST(std::filesystem::exists(logs.file("checkpoint.bin.tmp")));
  BOOST_TEST(!std::filesystem::exists(logs.file("checkpoint.bin")));
  const auto refused = withFailpoints("checkpoint.before-rename=explode");
  BOOST_TEST(refused.exitCode == kExitConfig);
  BOOST_TEST(contains(refused.err, "invalid PSTRAIN_FAILPOINTS"), refused.err);
}
