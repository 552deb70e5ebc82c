#define BOOST_TEST_MODULE recut
#include <boost/test/unit_test.hpp>

#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "pstrain/common/error.hpp"
#include "support/accuracy_cost.hpp"
#include "support/in_process_cluster.hpp"
#include "support/wait.hpp"

// The number of ps changed during a run: worker 0 re-cuts the parameters over the ps the
// settings name now, and the run goes on from its global step. Ps and workers are threads of
// this process, over memory and over TCP on 127.0.0.1, in both consistency modes.

using namespace pstrain;
using namespace pstrain::testing;

namespace {

struct loopbackAsync {
  static constexpr Transport kTransport = Transport::kLoopback;
  static constexpr const char* kSync = "false";
};
struct tcpAsync {
  static constexpr Transport kTransport = Transport::kTcp;
  static constexpr const char* kSync = "false";
};
struct loopbackSync {
  static constexpr Transport kTransport = Transport::kLoopback;
  static constexpr const char* kSync = "true";
};
struct tcpSync {
  static constexpr Transport kTransport = Transport::kTcp;
  static constexpr const char* kSync = "true";
};
using Runs = std::tuple<loopbackAsync, tcpAsync, loopbackSync, tcpSync>;

constexpr int kTrainSteps = 2000;

std::vector<std::string> flags(const char* sync) {
  return {"--ps", "2", "--workers", "2", "--train-steps", std::to_string(kTrainSteps),
          "--batch-size", "20", "--hidden-units", "16", "--eval-every-steps", "0",
          "--peer-timeout-seconds", "10", "--sync", sync, "--record-history"};
}

// The run's history breaks none of its invariants (testing::checkHistories).
void checkHistory(const InProcessCluster& cluster) {
  const auto violations = cluster.checkHistory();
  BOOST_TEST(violations.empty(), fmt::format("{}", fmt::join(violations, "\n")));
}

std::uint64_t stepOf(InProcessCluster& cluster, int ps) { return cluster.server(ps).globalStep(); }

// Worker 0's re-cuts so far.
std::vector<Poco::JSON::Object::Ptr> recuts(InProcessCluster& cluster) {
  return cluster.workerReports(0).eventsNamed("recut");
}

// Waits for worker 0's re-cut number `generation`.
void awaitRecut(InProcessCluster& cluster, size_t generation) {
  BOOST_REQUIRE(waitFor([&] { return recuts(cluster).size() >= generation; },
                        std::chrono::seconds(30)));
}

// A run of the same settings without any change: worker 0's final test accuracy.
double accuracyWithoutChange(Transport transport, const char* sync) {
  InProcessCluster twin(transport, flags(sync));
  for (int i = 0; i < 2; ++i) twin.startPs(i);
  for (int w = 0; w < 2; ++w) twin.startWorker(w);
  return *twin.joinWorkers().at(0).testAccuracy;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(two_ps_become_three_then_one_and_the_run_goes_on, Run, Runs) {
  InProcessCluster cluster(Run::kTransport, flags(Run::kSync));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= 200; }, std::chrono::seconds(30)));

  cluster.startPs(2);
  cluster.setPsCount(3);
  awaitRecut(cluster, 1);
  auto grown = recuts(cluster).back();
  BOOST_TEST(grown->getValue<int>("from_ps") == 2);
  BOOST_TEST(grown->getValue<int>("to_ps") == 3);
  // Each ps's optimizer state moved with its parameters; the run went on from its step.
  BOOST_TEST(grown->getValue<std::uint64_t>("lost_state") == 0u);
  const auto grownAt = grown->getValue<std::uint64_t>("step");
  BOOST_TEST(grownAt >= 200u);
  BOOST_TEST(cluster.server(2).cut().psCount == 3);
  BOOST_TEST(cluster.server(2).cut().generation == 1u);

  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= grownAt + 200; },
                        std::chrono::seconds(30)));
  cluster.setPsCount(1);
  awaitRecut(cluster, 2);
  auto shrunk = recuts(cluster).back();
  BOOST_TEST(shrunk->getValue<int>("to_ps") == 1);
  BOOST_TEST(shrunk->getValue<std::uint64_t>("lost_state") == 0u);
  BOOST_TEST(shrunk->getValue<std::uint64_t>("step") >= grownAt + 200);

  auto results = cluster.joinWorkers();
  // ps 0 holds all the parameters, ps 1 and 2 none, and the run ended at exactly trainSteps.
  BOOST_TEST(cluster.server(0).cut().range.count ==
             model::Layout::mnist(cluster.settings().hiddenUnits).parameterCount());
  BOOST_TEST(cluster.server(1).cut().range.count == 0u);
  BOOST_TEST(cluster.server(2).cut().range.count == 0u);
  BOOST_TEST(stepOf(cluster, 0) == std::uint64_t(kTrainSteps));
  for (const auto& [index, result] : results) BOOST_TEST(result.globalStep == std::uint64_t(kTrainSteps));
  const double accuracy = *results.at(0).testAccuracy;
  const double twin = accuracyWithoutChange(Run::kTransport, Run::kSync);
  BOOST_TEST(accuracyCost(accuracy, twin) <= 0.01, accuracy << " against " << twin);
  checkHistory(cluster);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_ps_gone_before_the_recut_leaves_its_state_to_worker_0s_copy, Run,
                              Runs) {
  InProcessCluster cluster(Run::kTransport, flags(Run::kSync));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= 200; }, std::chrono::seconds(30)));
  // A StatefulSet scaled down: its pod is gone before worker 0 reads the settings.
  cluster.stopPs(1);
  cluster.setPsCount(1);
  awaitRecut(cluster, 1);
  auto recut = recuts(cluster).back();
  const auto ps1 = std::uint64_t(
      ps::shardRange(model::Layout::mnist(cluster.settings().hiddenUnits).parameterCount(), 2, 1)
          .count);
  BOOST_TEST(recut->getValue<std::uint64_t>("lost_state") == ps1);
  BOOST_TEST(recut->getValue<std::string>("unreached") == cluster.psEndpoint(1).toString());
  auto results = cluster.joinWorkers();
  BOOST_TEST(stepOf(cluster, 0) == std::uint64_t(kTrainSteps));
  BOOST_TEST(*results.at(0).testAccuracy >= 0.8);
  checkHistory(cluster);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_recut_cut_off_in_transit_thaws_and_is_made_again, Run, Runs) {
  InProcessCluster cluster(Run::kTransport, flags(Run::kSync));
  cluster.startPs(0);
  // ps 1's channel to worker 0 breaks as its new slice comes, as if worker 0 died then.
  std::atomic<bool> cutOff{false};
  cluster.startPs(1, [&](const net::Incoming& frame) {
    if (frame.type == net::MessageType::kSliceState && !cutOff.exchange(true)) {
      throw UnreachableError("the new slice was cut off in transit");
    }
  });
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= 200; }, std::chrono::seconds(30)));
  cluster.startPs(2);
  cluster.setPsCount(3);
  awaitRecut(cluster, 1);
  BOOST_TEST(cutOff.load());
  // Worker 0 reported the re-cut incomplete, then found the ps back on their old cut and re-cut.
  const auto incomplete = cluster.workerReports(0).eventsNamed("recut_incomplete");
  BOOST_TEST(incomplete.size() == 1u);
  BOOST_TEST(!incomplete.at(0)->getValue<std::string>("reason").empty());
  // No ps served its slice of the first attempt, which committed none: ps 1 served its frozen
  // cut again, and so did ps 0, which held its slice, unless the second attempt's freeze reached
  // it before it saw the first attempt's channel end (a loaded machine); then both took their
  // slices of the re-cut made again, to the same generation.
  BOOST_TEST(cluster.psReports(0).eventsNamed("cut_thawed").size() <= 1u);
  BOOST_TEST(cluster.psReports(1).eventsNamed("cut_thawed").size() == 1u);
  BOOST_TEST(recuts(cluster).size() == 1u);
  BOOST_TEST(recuts(cluster).back()->getValue<std::uint64_t>("generation") == 1u);
  BOOST_TEST(recuts(cluster).back()->getValue<std::uint64_t>("lost_state") == 0u);
  BOOST_TEST(cluster.server(1).cut().generation == 1u);
  BOOST_TEST(cluster.server(1).cut().psCount == 3);
  auto results = cluster.joinWorkers();
  BOOST_TEST(stepOf(cluster, 0) == std::uint64_t(kTrainSteps));
  for (const auto& [index, result] : results) BOOST_TEST(result.globalStep == std::uint64_t(kTrainSteps));
  checkHistory(cluster);
}

// The settings change back while worker 0 re-cuts to 3 ps (ps 2 takes its slice, then the count
// is 2 again): worker 0, connecting to the cut it made, finds the ps serving different cuts and
// re-cuts at once. No link holds ps 2 then, but it was of the cut served last: it gives its slice
// and optimizer state all the same.
BOOST_AUTO_TEST_CASE_TEMPLATE(settings_changed_back_during_a_recut_lose_no_state, Run, Runs) {
  InProcessCluster cluster(Run::kTransport, flags(Run::kSync));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= 200; }, std::chrono::seconds(30)));
  cluster.startPs(2, [&](const net::Incoming& frame) {
    if (frame.type == net::MessageType::kSliceState) cluster.setPsCount(2);
  });
  cluster.setPsCount(3);
  awaitRecut(cluster, 2);
  const auto grown = recuts(cluster)[0], shrunk = recuts(cluster)[1];
  BOOST_TEST(grown->getValue<int>("to_ps") == 3);
  BOOST_TEST(shrunk->getValue<int>("to_ps") == 2);
  BOOST_TEST(shrunk->getValue<int>("from_ps") == 3);
  BOOST_TEST(shrunk->getValue<std::uint64_t>("lost_state") == 0u);
  auto results = cluster.joinWorkers();
  BOOST_TEST(cluster.server(2).cut().range.count == 0u);
  BOOST_TEST(stepOf(cluster, 0) == std::uint64_t(kTrainSteps));
  for (const auto& [index, result] : results) BOOST_TEST(result.globalStep == std::uint64_t(kTrainSteps));
  checkHistory(cluster);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_recut_without_a_lost_ps_cut_off_in_transit_is_made_again, Run,
                              Runs) {
  InProcessCluster cluster(Run::kTransport, flags(Run::kSync));
  // ps 0's channel to worker 0 breaks as its new slice comes.
  std::atomic<bool> cutOff{false};
  cluster.startPs(0, [&](const net::Incoming& frame) {
    if (frame.type == net::MessageType::kSliceState && !cutOff.exchange(true)) {
      throw UnreachableError("the new slice was cut off in transit");
    }
  });
  cluster.startPs(1);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= 200; }, std::chrono::seconds(30)));
  // ps 1 leaves the settings as it stops, as a pod scaled away does: worker 0 finds it gone and
  // re-cuts without it. (In sync mode, settings that named ps 1 until worker 0 had lost it could
  // hold worker 0 at ps 0's barrier for a push of worker 1, which waits for ps 1 to come back.)
  cluster.stopPs(1);
  cluster.setPsCount(1);
  auto results = cluster.joinWorkers();  // before, worker 0 gave up with the broken channel
  BOOST_TEST(cutOff.load());
  // ps 0 served its frozen cut again, then took the whole of the re-cut made again.
  BOOST_TEST(cluster.psReports(0).eventsNamed("cut_thawed").size() == 1u);
  BOOST_TEST(cluster.server(0).cut().psCount == 1);
  BOOST_TEST(stepOf(cluster, 0) == std::uint64_t(kTrainSteps));
  for (const auto& [index, result] : results) {
    BOOST_TEST(result.globalStep == std::uint64_t(kTrainSteps));
  }
}

// After a re-cut to 1 ps, ps 0 is killed and its disk lost: it comes back serving the configured
// cut of 2 ps from step 0 (generation 0). That is older than the cut the workers served, so worker
// 0 re-cuts it from its copy (generation 2) instead of the run going on from the initial
// parameters at step 0.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_ps_back_without_its_checkpoint_after_a_recut_is_recut_from_the_copy,
                              Run, Runs) {
  InProcessCluster cluster(Run::kTransport, flags(Run::kSync));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= 200; }, std::chrono::seconds(30)));
  cluster.setPsCount(1);
  awaitRecut(cluster, 1);
  const auto recutAt = recuts(cluster).back()->getValue<std::uint64_t>("step");
  BOOST_REQUIRE(waitFor([&] { return stepOf(cluster, 0) >= recutAt + 200; },
                        std::chrono::seconds(30)));
  cluster.crashPs(0);
  std::filesystem::remove(cluster.checkpointPath(0));
  cluster.startPs(0);
  awaitRecut(cluster, 2);
  const auto again = recuts(cluster).back();
  BOOST_TEST(again->getValue<std::uint64_t>("generation") == 2u);
  // From the copy, trained past the first re-cut, not from step 0.
  BOOST_TEST(again->getValue<std::uint64_t>("step") > recutAt);
  auto results = cluster.joinWorkers();
  BOOST_TEST(stepOf(cluster, 0) == std::uint64_t(kTrainSteps));
  for (const auto& [index, result] : results) BOOST_TEST(result.globalStep == std::uint64_t(kTrainSteps));
  const double accuracy = *results.at(0).testAccuracy;
  const double twin = accuracyWithoutChange(Run::kTransport, Run::kSync);
  BOOST_TEST(accuracyCost(accuracy, twin) <= 0.02, accuracy << " against " << twin);
  checkHistory(cluster);
}
