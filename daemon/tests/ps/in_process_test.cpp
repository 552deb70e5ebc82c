#define BOOST_TEST_MODULE in_process
#include <boost/test/unit_test.hpp>

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <memory>
#include <set>
#include <thread>
#include <tuple>

#include "pstrain/app/ps_reporter.hpp"
#include "pstrain/app/role_options.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/model/mlp.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "pstrain/worker/batch_sampler.hpp"
#include "support/accuracy_cost.hpp"
#include "support/idx_files.hpp"
#include "support/in_process_cluster.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// The ps and worker logic as threads of this process: whole runs and fault scenarios in about a
// second each, every one over each transport, as its name says: `<loopback>` through memory,
// `<tcp>` over the daemon's sockets on 127.0.0.1.

using namespace pstrain;
using namespace pstrain::testing;

struct loopback {
  static constexpr Transport kTransport = Transport::kLoopback;
};
struct tcp {
  static constexpr Transport kTransport = Transport::kTcp;
};
using Transports = std::tuple<loopback, tcp>;

// A test of the cluster, run once over each transport: `Over::kTransport` in its body.
#define CLUSTER_TEST(name) BOOST_AUTO_TEST_CASE_TEMPLATE(name, Over, Transports)

namespace {

std::vector<std::string> flags(int ps, int workers, int trainSteps,
                               std::vector<std::string> more = {}) {
  std::vector<std::string> all{"--ps", std::to_string(ps), "--workers", std::to_string(workers),
                               "--train-steps", std::to_string(trainSteps), "--batch-size", "20",
                               "--hidden-units", "16", "--eval-every-steps", "0",
                               "--peer-timeout-seconds", "10",
                               // Asynchronous unless a test says --sync: what most cases are about.
                               "--sync", "false"};
  all.insert(all.end(), more.begin(), more.end());
  return all;
}

// The global step every ps has reached.
std::uint64_t globalStep(InProcessCluster& cluster) {
  std::uint64_t step = UINT64_MAX;
  for (int i = 0; i < cluster.settings().ps; ++i) {
    step = std::min(step, cluster.server(i).globalStep());
  }
  return step;
}

// The events named `event` that a ps or worker has recorded.
std::vector<Poco::JSON::Object::Ptr> eventsNamed(const InProcessCluster::Reports& reports,
                                                 const std::string& event) {
  auto recorded = parseObject(reports.events.since(0))->getArray("events");
  std::vector<Poco::JSON::Object::Ptr> named;
  for (size_t i = 0; i < recorded->size(); ++i) {
    auto e = recorded->getObject(unsigned(i));
    if (e->getValue<std::string>("event") == event) named.push_back(e);
  }
  return named;
}

// The peers of the events named `event` that a worker has recorded.
std::vector<std::string> peersOf(InProcessCluster& cluster, int worker, const std::string& event) {
  std::vector<std::string> peers;
  for (const auto& e : eventsNamed(cluster.workerReports(worker), event)) {
    peers.push_back(e->getValue<std::string>("peer"));
  }
  return peers;
}

// One gradient of the right size that changes nothing much.
std::vector<float> smallGradient(const InProcessCluster& cluster) {
  return std::vector<float>(
      model::Layout::mnist(cluster.settings().hiddenUnits).parameterCount(), 1e-3f);
}

}  // namespace

CLUSTER_TEST(trains_to_exactly_train_steps) {
  InProcessCluster cluster(Over::kTransport, flags(2, 3, 600));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 3; ++w) cluster.startWorker(w);
  auto results = cluster.joinWorkers();
  for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == 600u);
  std::uint64_t localSteps = 0;
  for (const auto& [index, result] : results) {
    BOOST_TEST(result.globalStep == 600u);
    localSteps += result.localSteps;
  }
  // Every applied push is one global step on each ps; at the very end a worker's last push may
  // reach one ps before its last step and the other after it.
  BOOST_TEST(localSteps >= 600u);
  BOOST_TEST(localSteps <= 603u);
  BOOST_TEST(results[0].testAccuracy.value_or(0) >= 0.9);
}

CLUSTER_TEST(factored_pushes_step_every_ps_as_dense_ones_do) {
  // At batch 3 the 784 x 16 first layer goes as factors; 3 ps cut its columns.
  // Factors go in fp32 pushes alone.
  const std::vector<std::string> settings =
      flags(3, 1, 10, {"--batch-size", "3", "--push-encoding", "fp32"});
  InProcessCluster factoredRun(Over::kTransport, settings);
  InProcessCluster denseRun(Over::kTransport, settings);
  const auto layout = model::Layout::mnist(factoredRun.settings().hiddenUnits);
  BOOST_REQUIRE(ps::factorsLayer(layout, 0, 3));
  model::Mlp mlp(layout);
  const auto& examples = factoredRun.trainingSet();
  const std::vector<std::uint32_t> batch{0, 1, 2};
  arma::fmat inputs;
  model::gatherInputs(examples.pixels.data(), examples.imageSize(), batch.data(), 3, inputs);
  auto initial = model::initialParameters(layout, factoredRun.settings().seed);
  std::vector<float> dense(layout.parameterCount()), partial(layout.parameterCount());
  mlp.lossAndGradient(initial.data(), inputs, examples.labels.data(), dense.data());
  const auto layers = ps::factoredLayers(layout, 3);
  mlp.lossAndGradient(initial.data(), inputs, examples.labels.data(), partial.data(), layers);
  const auto factored = ps::gradientOf(mlp, inputs, partial.data(), layers);
  BOOST_TEST(factored.batch == 3u);

  std::vector<std::vector<float>> after;
  for (auto* run : {&factoredRun, &denseRun}) {
    for (int i = 0; i < 3; ++i) run->startPs(i);
    auto client = run->client(0);
    client->connect();
    after.emplace_back(layout.parameterCount());
    auto gradient = run == &factoredRun ? factored : ps::Gradient(dense.data());
    BOOST_TEST(client->pushPull(gradient, after.back().data(), 1, 0).applied);
    for (int i = 0; i < 3; ++i) BOOST_TEST(run->server(i).globalStep() == 1u);
  }
  size_t moved = 0;
  for (size_t i = 0; i < after[0].size(); ++i) {
    BOOST_TEST_REQUIRE(std::abs(after[0][i] - after[1][i]) <= 1e-6f, "parameter " << i);
    if (after[0][i] != initial[i]) ++moved;
  }
  BOOST_TEST(moved > after[0].size() / 2);  // the step did change the model
}

CLUSTER_TEST(factored_training_ends_at_exactly_train_steps_async_and_sync) {
  for (auto sync : {"false", "true"}) {
    BOOST_TEST_CONTEXT("sync " << sync) {
      InProcessCluster cluster(Over::kTransport,
                               flags(3, 2, 600, {"--batch-size", "3", "--sync", sync,
                                                 "--push-encoding", "fp32"}));
      for (int i = 0; i < 3; ++i) cluster.startPs(i);
      for (int w = 0; w < 2; ++w) cluster.startWorker(w);
      auto results = cluster.joinWorkers();
      for (int i = 0; i < 3; ++i) BOOST_TEST(cluster.server(i).globalStep() == 600u);
      BOOST_TEST(results[0].globalStep == 600u);
      BOOST_TEST(results[0].testAccuracy.value_or(0) >= 0.8);
    }
  }
}

// The other tests run the default encodings (log4 pushes, q3 answers); these run fp32, and
// another lossy pair.
CLUSTER_TEST(other_wire_encodings_train_to_exactly_train_steps_async_and_sync) {
  for (auto [sync, push, pull] : {std::tuple{"false", "fp32", "fp32"}, {"true", "fp32", "fp32"},
                                  {"false", "q4", "log4"}, {"true", "q4", "q2"}}) {
    BOOST_TEST_CONTEXT("sync " << sync << ", " << push << " pushes, " << pull << " answers") {
      InProcessCluster cluster(
          Over::kTransport,
          flags(2, 3, 600, {"--sync", sync, "--push-encoding", push, "--pull-encoding", pull}));
      for (int i = 0; i < 2; ++i) cluster.startPs(i);
      for (int w = 0; w < 3; ++w) cluster.startWorker(w);
      auto results = cluster.joinWorkers();
      for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == 600u);
      BOOST_TEST(results[0].globalStep == 600u);
      BOOST_TEST(results[0].testAccuracy.value_or(0) >= 0.9);
    }
  }
}

CLUSTER_TEST(a_worker_whose_wire_encoding_differs_is_refused_at_once_naming_both) {
  InProcessCluster cluster(Over::kTransport, flags(1, 1, 10, {"--push-encoding", "q4"}));
  cluster.startPs(0);
  auto stranger = cluster.client(0, [](ps::ClientOptions& options) {
    options.pushEncoding = net::WireEncoding::kFp32;
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    stranger->connect();
    BOOST_FAIL("connected");
  } catch (const RefusedError& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("pushes fp32") != std::string::npos, what);
    BOOST_TEST(what.find("takes q4 pushes") != std::string::npos, what);
  }
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(2)));
}

CLUSTER_TEST(workers_reconnect_to_a_ps_that_restarts_mid_run) {
  InProcessCluster cluster(Over::kTransport, flags(2, 2, 4000));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return globalStep(cluster) >= 500; }, std::chrono::seconds(30)));
  cluster.stopPs(1);  // its checkpoint holds every push it acknowledged
  cluster.startPs(1);
  auto results = cluster.joinWorkers();
  BOOST_TEST(cluster.server(1).globalStep() == 4000u);
  BOOST_TEST(cluster.server(0).globalStep() == 4000u);
  BOOST_TEST(results[0].globalStep == 4000u);
  auto reconnects = [&](int w) { return cluster.workerReports(w).meters.reconnects.load(); };
  BOOST_TEST(reconnects(0) + reconnects(1) >= 2u);
  // Each worker's record tells which ps it lost and got back.
  const std::vector<std::string> ps1{"ps " + cluster.psEndpoint(1).toString()};
  for (int w = 0; w < 2; ++w) {
    BOOST_TEST(peersOf(cluster, w, "lost") == ps1);
    BOOST_TEST(peersOf(cluster, w, "reconnected") == ps1);
    BOOST_TEST(peersOf(cluster, w, "connected").size() == 2u);
  }
}

CLUSTER_TEST(a_worker_survives_a_ps_that_dies_again_while_it_pulls_after_reconnecting) {
  InProcessCluster cluster(Over::kTransport, flags(2, 1, 2000));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  cluster.startWorker(0);
  BOOST_REQUIRE(waitFor([&] { return globalStep(cluster) >= 300; }, std::chrono::seconds(30)));
  cluster.stopPs(1);
  // Back, but its connection breaks at the first pull it is sent: the one that follows the
  // worker's reconnect.
  std::atomic<bool> died{false};
  cluster.startPs(1, [&](const net::Incoming& frame) {
    if (frame.type == net::MessageType::kPull && !died.exchange(true)) {
      throw UnreachableError("ps 1 dies while answering a pull");
    }
  });
  BOOST_REQUIRE(waitFor([&] { return died.load(); }, std::chrono::seconds(10)));
  cluster.stopPs(1);
  cluster.startPs(1);
  auto results = cluster.joinWorkers();  // throws if the worker gave up
  for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == 2000u);
  BOOST_TEST(results[0].globalStep == 2000u);
}

CLUSTER_TEST(a_worker_reconnects_every_lost_ps_at_once) {
  InProcessCluster cluster(Over::kTransport, flags(3, 1, 100));
  for (int i = 0; i < 3; ++i) cluster.startPs(i);
  auto worker = cluster.client(0);
  worker->connect();
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  BOOST_TEST(worker->pushPull(ps::Gradient(gradient.data()), params.data(), 1, 0).applied);
  cluster.stopPs(1);
  cluster.stopPs(2);
  cluster.startPs(2);  // ps 1 stays away for now
  std::thread pushing([&] { worker->pushPull(ps::Gradient(gradient.data()), params.data(), 2, 0); });
  // ps 2 has the worker back while ps 1 is still missing: ps 1 holds nobody up.
  const bool ps2Back = waitFor(
      [&] { return !eventsNamed(cluster.psReports(2), "connected").empty(); },
      std::chrono::seconds(5));
  cluster.startPs(1);
  pushing.join();
  BOOST_TEST(ps2Back);
  BOOST_TEST(peersOf(cluster, 0, "reconnected").size() == 2u);
  // Its push was lost with the ps that went away; the next is applied everywhere.
  BOOST_TEST(worker->pushPull(ps::Gradient(gradient.data()), params.data(), 3, 0).applied);
  for (int i = 0; i < 3; ++i) BOOST_TEST(cluster.server(i).globalStep() >= 2u);
}

namespace {

// When worker `index` recorded each of its steps, in Unix seconds, in order.
std::vector<double> stepTimes(InProcessCluster& cluster, int index) {
  std::vector<double> times;
  for (const auto& e : eventsNamed(cluster.workerReports(index), "step")) {
    times.push_back(e->getValue<double>("time"));
  }
  return times;
}

// How many of `times` fall between `from` and `to`.
long stepsBetween(const std::vector<double>& times, double from, double to) {
  return long(std::count_if(times.begin(), times.end(),
                            [&](double t) { return t > from && t < to; }));
}

// The longest time between two of `times`, in order.
double longestGap(const std::vector<double>& times) {
  double gap = 0;
  for (size_t i = 1; i < times.size(); ++i) gap = std::max(gap, times[i] - times[i - 1]);
  return gap;
}

// The ps named in the events named `event` of worker `index`, each once.
std::set<std::string> psOf(InProcessCluster& cluster, int index, const std::string& event) {
  const auto peers = peersOf(cluster, index, event);
  return {peers.begin(), peers.end()};
}

}  // namespace

// A ps's frame hook that takes at least 1 ms over each push: a worker then makes at most 1,000
// steps/s on any machine, so that what a test does during a run happens before it ends.
static void atMostOnePushPerMillisecond(const net::Incoming& frame) {
  if (frame.type == net::MessageType::kPush) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Starts 2 ps and 2 workers, ps 0 taking at least 1 ms over each push (so that the run's pace is
// bounded on any machine), and waits for worker 0 to reach global step 500.
void startPacedUntilStep500(InProcessCluster& cluster) {
  cluster.startPs(0, atMostOnePushPerMillisecond);
  cluster.startPs(1);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return cluster.workerReports(0).progress.globalStep() >= 500; },
                        std::chrono::seconds(30)));
}

CLUSTER_TEST(a_worker_cut_off_from_every_ps_waits_and_trains_on_once_back) {
  constexpr std::uint64_t kSteps = 6000;
  constexpr double kOutage = 1.5;
  // A step whose answers were in before the cut is recorded a moment after it.
  constexpr double kMargin = 0.1;
  InProcessCluster cluster(Over::kTransport, flags(2, 2, kSteps));
  // ps 0 takes at least 1 ms over each push: worker 1, alone while worker 0 is away (the outage,
  // then up to as long again for its next attempt to reconnect), makes at most 3,200 steps of
  // the 5,500 left, on any machine, and worker 0 is back before the run ends.
  startPacedUntilStep500(cluster);
  const double cut = unixTime();
  cluster.cutOff(0);
  std::this_thread::sleep_for(std::chrono::duration<double>(kOutage));  // the fault: this long
  const double restored = unixTime();
  cluster.restore(0);
  auto results = cluster.joinWorkers();  // throws if a worker gave up
  for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == kSteps);
  for (int w = 0; w < 2; ++w) BOOST_TEST(results[w].globalStep == kSteps);

  const auto steps0 = stepTimes(cluster, 0);
  BOOST_REQUIRE_MESSAGE(!steps0.empty() && steps0.back() > restored,
                        "worker 0 made no step once back: the run ended during the outage, so it "
                        "shows no pause (the test needs a longer run)");
  BOOST_TEST(stepsBetween(steps0, cut + kMargin, restored) == 0);
  const double pause = longestGap(steps0);
  BOOST_TEST(pause >= kOutage - kMargin);
  BOOST_TEST_MESSAGE("worker 0's longest pause between steps: " << pause << " s");
  // Worker 1 trained on meanwhile, losing no ps; worker 0 lost each ps and got it back.
  BOOST_TEST(stepsBetween(stepTimes(cluster, 1), cut, restored) > 0);
  BOOST_TEST(peersOf(cluster, 1, "lost").empty());
  const std::set<std::string> everyPs{"ps " + cluster.psEndpoint(0).toString(),
                                       "ps " + cluster.psEndpoint(1).toString()};
  BOOST_TEST(psOf(cluster, 0, "lost") == everyPs);
  BOOST_TEST(psOf(cluster, 0, "reconnected") == everyPs);
}

CLUSTER_TEST(a_paused_worker_keeps_its_connections_and_trains_on_once_resumed) {
  // SIGSTOP, then SIGCONT: unlike a cut, its connections stay open and the ps wait on them, so
  // it loses no ps and connects to none again.
  constexpr std::uint64_t kSteps = 6000;
  constexpr double kPause = 1.5;
  constexpr double kMargin = 0.1;  // a step under way when it is paused is recorded after it
  InProcessCluster cluster(Over::kTransport, flags(2, 2, kSteps));
  // Worker 1, alone during the pause, makes at most 1,500 steps: the run outlasts it.
  startPacedUntilStep500(cluster);
  const double paused = unixTime();
  cluster.pauseWorker(0, std::chrono::milliseconds(int(kPause * 1000)));
  auto results = cluster.joinWorkers();  // throws if a worker gave up
  for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == kSteps);
  for (int w = 0; w < 2; ++w) BOOST_TEST(results[w].globalStep == kSteps);

  const auto steps0 = stepTimes(cluster, 0);
  BOOST_REQUIRE(!steps0.empty());
  BOOST_TEST(steps0.back() > paused + kPause);
  // A step recorded as the pause ends may read a moment early: a margin at both ends.
  BOOST_TEST(stepsBetween(steps0, paused + kMargin, paused + kPause - kMargin) == 0);
  BOOST_TEST(longestGap(steps0) >= kPause - kMargin);
  BOOST_TEST(stepsBetween(stepTimes(cluster, 1), paused, paused + kPause) > 0);
  BOOST_TEST(peersOf(cluster, 0, "lost").empty());
  BOOST_TEST(cluster.workerReports(0).meters.reconnects == 0u);
}

namespace {

// The part of the training set worker `index` was last told to sample from, and of how many.
struct Part {
  std::uint64_t first = 0, end = 0, workers = 0;
};
Part latestPart(InProcessCluster& cluster, int index) {
  auto divided = eventsNamed(cluster.workerReports(index), "divided");
  if (divided.empty()) return {};
  const auto& e = divided.back();
  return {e->getValue<std::uint64_t>("first"), e->getValue<std::uint64_t>("end"),
          e->getValue<std::uint64_t>("workers")};
}

// Whether `parts`, in any order, cover [0, total) once.
bool coverOnce(std::vector<Part> parts, std::uint64_t total) {
  std::sort(parts.begin(), parts.end(),
            [](const Part& a, const Part& b) { return a.first < b.first; });
  std::uint64_t next = 0;
  for (const auto& part : parts) {
    if (part.first != next || part.end <= part.first) return false;
    next = part.end;
  }
  return next == total;
}

}  // namespace

CLUSTER_TEST(workers_join_and_leave_a_run_that_ends_at_exactly_train_steps) {
  // Configured for 2 workers: worker 2, beyond that count, joins; worker 1 leaves.
  constexpr std::uint64_t kSteps = 5000;
  InProcessCluster cluster(Over::kTransport, flags(2, 2, kSteps));
  // At most 3,000 steps/s with three workers: over a second for worker 2 to join and worker 1 to
  // leave before the run ends (unthrottled, it once ended first, in 0.5 s).
  cluster.startPs(0, atMostOnePushPerMillisecond);
  cluster.startPs(1);
  cluster.startWorker(0);
  auto worker1 = cluster.client(1);
  worker1->connect();
  std::vector<float> params(smallGradient(cluster).size());
  worker1->pull(params.data());  // counted among the workers from its first request
  BOOST_REQUIRE(waitFor([&] { return globalStep(cluster) >= 300; }, std::chrono::seconds(30)));
  cluster.startWorker(2);
  // Three workers, each on its own third of the training set: together every example once.
  const std::uint64_t total = cluster.trainingSet().count;
  BOOST_REQUIRE(waitFor([&] { return latestPart(cluster, 0).workers == 3 &&
                                     latestPart(cluster, 2).workers == 3; },
                        std::chrono::seconds(10)));
  worker1->pull(params.data());
  const auto part1 = worker::partOf(total, worker1->division().rank, worker1->division().workers);
  BOOST_TEST(worker1->division().workers == 3u);
  BOOST_TEST(coverOnce({latestPart(cluster, 0), {part1.begin, part1.end, 3},
                        latestPart(cluster, 2)}, total));
  worker1.reset();  // worker 1 goes: its channels close
  // Its share goes to the others.
  BOOST_REQUIRE(waitFor([&] { return latestPart(cluster, 0).workers == 2 &&
                                     latestPart(cluster, 2).workers == 2; },
                        std::chrono::seconds(10)));
  BOOST_TEST(coverOnce({latestPart(cluster, 0), latestPart(cluster, 2)}, total));
  auto results = cluster.joinWorkers();
  for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == kSteps);
  BOOST_TEST(results[0].globalStep == kSteps);
  BOOST_TEST(results[2].globalStep == kSteps);
  BOOST_TEST(results[0].mostWorkers == 3u);
  // Worker 2 started from the parameters of the run under way, not from the initial ones.
  const auto joined = eventsNamed(cluster.workerReports(2), "connected");
  BOOST_REQUIRE(!joined.empty());
  BOOST_TEST(joined[0]->getValue<std::uint64_t>("step") >= 300u);
  BOOST_TEST(results[2].localSteps > 0u);
}

// A worker that connects, reads the parameters, has five pushes applied, and leaves: its
// channels close.
static void trainFiveStepsAndLeave(InProcessCluster& cluster, int index, std::vector<float>& gradient,
                            std::vector<float>& params) {
  auto worker = cluster.client(index);
  worker->connect();
  worker->pull(params.data());  // as a trainer does: a sync push of older parameters is stale
  for (std::uint64_t step = 1; step <= 5; ++step) {
    BOOST_TEST(worker->pushPull(ps::Gradient(gradient.data()), params.data(), step, 0).applied);
  }
}

// A request handle that answers every pull and push with the same parameters at global step 3,
// applying nothing, and counts the pushes.
class FixedAnswers : public ps::RequestHandle {
 public:
  explicit FixedAnswers(size_t count)
      : values_(std::make_shared<std::vector<float>>(count, 7.0f)) {}

  Answer pull(std::uint32_t) override { return {{3, false, false, false, 0, 0, params(), 3, 0}, 0}; }
  Answer push(const ps::PushRequest& request) override {
    ++pushes;
    return pull(request.worker);
  }
  void adopt(std::uint32_t, std::uint64_t, const float*) override {}

  std::atomic<int> pushes{0};

 private:
  ps::Shard::Params params() const { return {values_, values_->data()}; }

  std::shared_ptr<std::vector<float>> values_;
};

CLUSTER_TEST(a_ps_hands_its_workers_requests_to_the_request_handle_set) {
  FixedAnswers handle(model::Layout::mnist({16}).parameterCount());  // outlives the channels
  InProcessCluster cluster(Over::kTransport, flags(1, 1, 10));
  cluster.startPs(0);
  cluster.server(0).setRequestHandle(handle);
  auto worker = cluster.client(0);
  worker->connect();
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  BOOST_TEST(worker->pull(params.data()).globalStep == 3u);
  BOOST_TEST(std::all_of(params.begin(), params.end(), [](float v) { return v == 7.0f; }));
  BOOST_TEST(!worker->pushPull(ps::Gradient(gradient.data()), params.data(), 1, 0).applied);
  BOOST_TEST(handle.pushes == 1);
  BOOST_TEST(cluster.server(0).globalStep() == 0u);  // the update rule saw none of it
}

CLUSTER_TEST(a_sync_step_waits_for_the_workers_connected_as_they_join_and_leave) {
  // A sync step that waited for a worker gone would wait for the 30 s deadline.
  InProcessCluster cluster(Over::kTransport,
                           flags(1, 2, 400, {"--sync", "--sync-timeout-seconds", "30"}));
  const auto start = std::chrono::steady_clock::now();
  cluster.startPs(0);
  cluster.startWorker(0);
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  trainFiveStepsAndLeave(cluster, 1, gradient, params);
  cluster.startWorker(2);  // beyond the configured 2 workers
  auto results = cluster.joinWorkers();
  BOOST_TEST(cluster.server(0).globalStep() == 400u);
  BOOST_TEST(results[0].globalStep == 400u);
  BOOST_TEST(results[2].globalStep == 400u);
  BOOST_TEST(results[2].localSteps > 0u);
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(20)));
  // No step was taken at the deadline, short of the workers connected.
  BOOST_TEST(eventsNamed(cluster.psReports(0), "averaged").empty());
}

CLUSTER_TEST(a_sync_step_waits_for_a_welcomed_worker_only_from_its_first_request) {
  // A worker welcomed by one ps may wait at another (a new ps, for worker 0): until it asks this
  // ps for something it is no member here, or every sync step would wait the deadline for it.
  InProcessCluster cluster(Over::kTransport,
                           flags(1, 2, 1000, {"--sync", "--sync-timeout-seconds", "10"}));
  cluster.startPs(0);
  auto worker0 = cluster.client(0);
  worker0->connect();
  auto elsewhere = cluster.client(1);
  elsewhere->connect();  // welcomed, and silent
  auto gradient = smallGradient(cluster);
  std::vector<float> params0(gradient.size()), params1(gradient.size());
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t step = 1; step <= 3; ++step) {  // each would wait 10 s for it
    BOOST_REQUIRE(worker0->pushPull(ps::Gradient(gradient.data()), params0.data(), step, 0).applied);
  }
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(5)));
  // Once it has pulled, it is waited for.
  elsewhere->pull(params1.data());
  std::thread pushing([&] {
    worker0->pushPull(ps::Gradient(gradient.data()), params0.data(), 4, 0);
  });
  BOOST_TEST(waitFor([&] { return cluster.server(0).syncArrivals() == 1; },
                     std::chrono::seconds(5)));
  elsewhere->pushPull(ps::Gradient(gradient.data()), params1.data(), 1, 0);
  pushing.join();
  BOOST_TEST(cluster.server(0).globalStep() == 4u);
}

CLUSTER_TEST(sync_run_goes_on_without_a_worker_that_drops_and_takes_it_back) {
  // Long enough that worker 0, alone at full speed once worker 1 has dropped (a sync step waits
  // for the workers connected), is still training when worker 1 comes back.
  constexpr std::uint64_t kSteps = 3000;
  InProcessCluster cluster(Over::kTransport,
                           flags(1, 2, kSteps, {"--sync", "--sync-timeout-seconds", "0.1"}));
  cluster.startPs(0);
  cluster.startWorker(0);
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  trainFiveStepsAndLeave(cluster, 1, gradient, params);
  // Worker 0 goes on alone, then worker 1 rejoins.
  const auto dropped = cluster.server(0).globalStep();
  BOOST_REQUIRE(waitFor([&] { return cluster.server(0).globalStep() >= dropped + 3; },
                        std::chrono::seconds(10)));
  auto worker1 = cluster.client(1);
  worker1->connect();
  worker1->pull(params.data());
  // The ps lists each worker once, at its latest connection.
  auto peers = parseObject(cluster.psReports(0).status())->getArray("peers");
  BOOST_TEST(peers->size() == 2u, cluster.psReports(0).status());
  // Taken back: its pushes go into steps (but one that came after its step closed at the
  // 0.1 s deadline, and one the end of the run turned away).
  std::uint64_t localSteps = 0;
  while (!worker1->done()) {
    auto exchange =
        worker1->pushPull(ps::Gradient(gradient.data()), params.data(), localSteps + 1, 0);
    if (exchange.applied) ++localSteps;
  }
  BOOST_TEST(localSteps > 0u);
  worker1->finish(localSteps);
  auto results = cluster.joinWorkers();
  BOOST_TEST(cluster.server(0).globalStep() == kSteps);
  BOOST_TEST(results[0].globalStep == kSteps);
}

// Over TCP, where a connection broken under the ps leaves its session waiting at the barrier until
// the step is taken.
BOOST_AUTO_TEST_CASE(a_worker_that_reconnects_while_its_push_waits_at_the_barrier_pushes_once_and_fresh) {
  constexpr std::uint64_t kSteps = 4;
  // 30 s barrier deadline; the history is checked: no step counts a worker twice, and no push
  // goes into a step after the one its parameters were of.
  InProcessCluster cluster(Transport::kTcp, flags(1, 2, kSteps, {"--sync", "--record-history"}));
  std::atomic<int> pulls{0}, pushes{0};  // that reached the ps
  cluster.startPs(0, [&](const net::Incoming& frame) {
    if (frame.type == net::MessageType::kPull) ++pulls;
    if (frame.type == net::MessageType::kPush) ++pushes;
  });
  auto worker0 = cluster.client(0);
  worker0->connect();
  auto worker1 = cluster.client(1);  // waited for, and silent until worker 0 has reconnected
  worker1->connect();
  auto gradient = smallGradient(cluster);
  std::vector<float> params0(gradient.size()), params1(gradient.size());
  worker1->pull(params1.data());  // a member of the barrier from its first request on
  const int pullsBefore = pulls;
  auto trainToTheEnd = [&](ps::Client& worker, std::vector<float>& params, std::uint64_t from) {
    for (auto step = from; !worker.done(); ++step) {
      if (!worker.pushPull(ps::Gradient(gradient.data()), params.data(), step, 0).applied) break;
    }
  };
  // Worker 0's push waits at the barrier for worker 1's; worker 0's channel breaks meanwhile.
  bool firstApplied = true;
  std::thread worker0Trains([&] {
    firstApplied = worker0->pushPull(ps::Gradient(gradient.data()), params0.data(), 1, 0).applied;
    trainToTheEnd(*worker0, params0, 2);
  });
  BOOST_REQUIRE_MESSAGE(
      waitFor([&] { return cluster.server(0).syncArrivals() == 1; }, std::chrono::seconds(10)),
      "worker 0's push did not wait at the barrier for worker 1");
  cluster.cutOff(0);
  cluster.restore(0);
  // Worker 0 reconnects and pulls while its push still waits: the pull is answered once that
  // step is taken, so its next gradient is of the step's parameters.
  BOOST_REQUIRE(waitFor([&] { return pulls > pullsBefore; }, std::chrono::seconds(10)));
  // Its next push waits for that answer: none comes while the step is open (counted in it
  // again, or computed on the parameters before it). A second, of a ps that answered the pull at
  // once, would come within milliseconds.
  BOOST_TEST(!waitFor([&] { return pushes >= 2; }, std::chrono::seconds(1)));
  trainToTheEnd(*worker1, params1, 1);
  worker0Trains.join();
  BOOST_TEST(!firstApplied);  // reconnected instead, its push still at the barrier
  BOOST_TEST(cluster.server(0).globalStep() == kSteps);
  const auto violations = cluster.checkHistory();
  BOOST_TEST(violations.empty(), fmt::format("{}", fmt::join(violations, "\n")));
}

CLUSTER_TEST(stopping_a_ps_releases_pushes_waiting_at_the_sync_barrier) {
  InProcessCluster cluster(Over::kTransport, flags(1, 2, 60, {"--sync"}));  // 30 s barrier deadline
  cluster.startPs(0);
  auto worker0 = cluster.client(0);
  worker0->connect();
  auto worker1 = cluster.client(1);  // pulled, so waited for, but it never pushes
  worker1->connect();
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  worker1->pull(params.data());
  bool parked = false;
  std::chrono::steady_clock::time_point stopped;
  std::thread stopper([&] {
    parked = waitFor([&] { return cluster.server(0).syncArrivals() == 1; }, std::chrono::seconds(10));
    stopped = std::chrono::steady_clock::now();
    cluster.server(0).stop();
  });
  auto exchange = worker0->pushPull(ps::Gradient(gradient.data()), params.data(), 1, 0);
  const auto released = std::chrono::steady_clock::now();
  stopper.join();
  BOOST_REQUIRE_MESSAGE(parked, "worker 0's push did not wait at the barrier for worker 1");
  BOOST_TEST(!exchange.applied);  // worker 1 never came; the ps stopped first
  // Released by the stop, long before the barrier's 30 s deadline.
  BOOST_TEST((released - stopped < std::chrono::seconds(5)));
  BOOST_TEST(cluster.server(0).globalStep() == 0u);
}

CLUSTER_TEST(a_worker_waiting_for_the_chief_is_let_go_at_the_peer_timeout) {
  // A worker that came before worker 0 and went away would otherwise hold its session's thread
  // and connection on the ps until worker 0 came, if ever. This one waits longer than the ps:
  // let go, it connects again, and is welcomed once worker 0 has come.
  InProcessCluster cluster(Over::kTransport, flags(1, 2, 100, {"--peer-timeout-seconds", "0.5"}));
  cluster.startPs(0);
  auto worker1 = cluster.client(1, [](ps::ClientOptions& o) { o.peerTimeoutSeconds = 30; });
  std::thread connecting([&] { worker1->connect(); });
  const bool letGo = waitFor([&] { return !peersOf(cluster, 1, "waiting").empty(); },
                             std::chrono::seconds(10));
  auto worker0 = cluster.client(0);
  worker0->connect();
  connecting.join();
  BOOST_TEST(letGo, "the ps held worker 1's first connection for 10 s without worker 0");
  const auto waiting = eventsNamed(cluster.workerReports(1), "waiting");
  BOOST_REQUIRE(!waiting.empty());
  BOOST_TEST_MESSAGE(waiting[0]->getValue<std::string>("reason"));
  BOOST_TEST(eventsNamed(cluster.psReports(0), "connected").size() == 2u);  // welcomed once each
}

CLUSTER_TEST(a_worker_of_another_run_is_refused_at_once) {
  InProcessCluster cluster(Over::kTransport, flags(1, 1, 10));
  cluster.startPs(0);
  auto stranger = cluster.client(0, [](ps::ClientOptions& options) { options.runId = 42; });
  const auto start = std::chrono::steady_clock::now();
  BOOST_CHECK_THROW(stranger->connect(), RefusedError);
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(2)));
}

CLUSTER_TEST(a_ps_that_never_appears_ends_after_the_peer_timeout) {
  InProcessCluster cluster(Over::kTransport, flags(1, 1, 10, {"--peer-timeout-seconds", "0.3"}));
  auto lonely = cluster.client(0);
  try {
    lonely->connect();
    BOOST_FAIL("expected UnreachableError");
  } catch (const UnreachableError& e) {
    BOOST_TEST(contains(e.what(), "peer " + cluster.psEndpoint(0).toString() + ": "), e.what());
    BOOST_TEST(contains(e.what(), ", until the peer timeout"), e.what());
  }
}

namespace {

// A ps, on no network, of a one-ps run whose checkpoint is `path`.
std::unique_ptr<ps::Server> psWithCheckpoint(ps::ServerObserver& observer, const std::string& path,
                                             double everySeconds = 0) {
  auto options = app::serverOptions(config::load({flags(1, 1, 10), {}}), 0);
  options.checkpointPath = path;
  options.checkpointEverySeconds = everySeconds;
  return std::make_unique<ps::Server>(std::move(options), observer);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_corrupt_checkpoint_is_a_file_error_naming_the_file) {
  TempDir dir;
  const auto path = dir.file("checkpoint.bin");
  writeFile(path, "not a checkpoint, only some text");
  InProcessCluster::Reports reports(Role::kPs, 0, 10);
  app::PsReporter reporter(0, 1, reports.progress, reports.meters, reports.workers,
                           reports.events);
  try {
    psWithCheckpoint(reporter, path);
    BOOST_FAIL("a corrupt checkpoint was restored");
  } catch (const IoError& e) {
    BOOST_TEST(contains(e.what(), "checkpoint " + path + " cannot be restored"), e.what());
  }
}

BOOST_AUTO_TEST_CASE(a_checkpoint_that_cannot_be_written_is_a_file_error_not_a_crash) {
  TempDir dir;
  writeFile(dir.file("a-file"), "");
  const auto path = dir.file("a-file/checkpoint.bin");  // under a file: no directory there
  InProcessCluster::Reports reports(Role::kPs, 0, 10);
  app::PsReporter reporter(0, 1, reports.progress, reports.meters, reports.workers,
                           reports.events);
  // Periodic checkpoints fail and are logged; the process goes on.
  auto server = psWithCheckpoint(reporter, path, 0.01);
  // Nothing to wait for: the failures are only logged. Ten periods pass; the process lives.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  try {
    server->checkpoint();
    BOOST_FAIL("a checkpoint under a file was written");
  } catch (const IoError& e) {
    BOOST_TEST(contains(e.what(), "cannot write " + path), e.what());
  }
}

BOOST_AUTO_TEST_CASE(a_ps_gives_the_slice_of_a_recut_that_thawed_uncommitted_at_the_next_freeze) {
  // Worker 0 gave this ps its slice and died before committing it, after committing other ps':
  // the slice is then the new cut's only copy of its range, and the next worker 0 needs it.
  TempDir dir;
  InProcessCluster::Reports reports(Role::kPs, 0, 10);
  app::PsReporter reporter(0, 1, reports.progress, reports.meters, reports.workers,
                           reports.events);
  auto server = psWithCheckpoint(reporter, dir.file("checkpoint.bin"));
  const auto first = server->freeze(1);
  BOOST_REQUIRE(first.slices.size() == 1u);
  auto given = first.slices[0];
  given.position.generation = 1;
  for (auto& value : given.slice.params) value += 1.0f;
  server->prepare(given);
  server->thaw(first.number);
  BOOST_TEST(server->cut().generation == 0u);  // serves its frozen cut again
  const auto second = server->freeze(2);
  BOOST_REQUIRE(second.slices.size() == 2u);
  BOOST_TEST(second.slices[1].position.generation == 1u);
  BOOST_TEST(second.slices[1].slice.params == given.slice.params);
  // Once a re-cut is committed here, the slice of the one that thawed is no longer given.
  auto next = second.slices[0];
  next.position.generation = 2;
  server->prepare(next);
  server->commit(2);
  const auto third = server->freeze(3);
  BOOST_TEST(third.slices.size() == 2u);  // the cut served, and the one the commit kept
  for (const auto& slice : third.slices) BOOST_TEST(slice.position.generation != 1u);
}

BOOST_AUTO_TEST_CASE(a_ps_beyond_the_runs_ps_serves_its_checkpoint_or_refuses_to_start) {
  // Removed from the settings and killed before worker 0 cut it out: started again, its
  // checkpoint may be the only copy of its slice.
  TempDir dir;
  const auto path = dir.file("checkpoint.bin");
  InProcessCluster::Reports reports(Role::kPs, 1, 10);
  app::PsReporter reporter(1, 1, reports.progress, reports.meters, reports.workers,
                           reports.events);
  auto optionsOf = [&](int ps) {
    auto options = app::serverOptions(config::load({flags(ps, 1, 10), {}}), 1);
    options.checkpointPath = path;
    return options;
  };
  ps::Server(optionsOf(2), reporter).stop();  // ps 1 of 2 writes its checkpoint
  const auto left = ps::Server(optionsOf(1), reporter).cut();  // ps 1 of 1
  BOOST_TEST(left.psCount == 2);
  BOOST_TEST(left.index == 1);
  BOOST_TEST(left.range.count == optionsOf(2).range.count);
  std::filesystem::remove(path);
  try {
    ps::Server(optionsOf(1), reporter);
    BOOST_FAIL("a ps beyond the run's ps started with no checkpoint");
  } catch (const ConfigError& e) {
    BOOST_TEST(contains(e.what(), "index 1 is out of range: there are 1 ps processes"), e.what());
  }
}

namespace {

// The staleness of the pushes ps `index` applied: their count and summed global steps.
std::pair<std::uint64_t, double> staleness(InProcessCluster& cluster, int index) {
  const auto summary = cluster.psReports(index).meters.stalenessSummary();
  return {summary.pushes, summary.total};
}

}  // namespace

CLUSTER_TEST(a_new_worker_waits_for_a_ps_that_lost_its_state_to_take_its_shard_first) {
  // As when a node is lost with ps 0 and worker 0 on it: both come back new, and worker 1, which
  // trained on, gives ps 0 its shard when it reconnects. The new worker 0 has no copy to give:
  // its first push, applied first, would be taken on the initial parameters and undone by the
  // copy.
  InProcessCluster cluster(Over::kTransport, flags(2, 2, 1000));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  auto lost = cluster.client(0);
  lost->connect();
  auto worker1 = cluster.client(1);
  worker1->connect();
  for (std::uint64_t step = 1; step <= 5; ++step) {
    lost->pushPull(ps::Gradient(gradient.data()), params.data(), step, 0);
    worker1->pushPull(ps::Gradient(gradient.data()), params.data(), step, 0);
  }
  lost.reset();
  cluster.stopPs(0);
  std::filesystem::remove(cluster.checkpointPath(0));
  cluster.startPs(0);

  std::thread newWorker0([&] {
    std::vector<float> own(gradient.size());
    auto worker0 = cluster.client(0);
    worker0->connect();
    worker0->pushPull(ps::Gradient(gradient.data()), own.data(), 1, 0);
  });
  const bool waited = waitFor(
      [&] { return !eventsNamed(cluster.workerReports(0), "waiting").empty(); },
      std::chrono::seconds(10));
  worker1->pushPull(ps::Gradient(gradient.data()), params.data(), 6, 0);  // reconnects to ps 0
  newWorker0.join();
  BOOST_TEST(waited, "the new worker 0 recorded no waiting for ps 0's shard");
  const auto recovered = eventsNamed(cluster.psReports(0), "recovered");
  BOOST_REQUIRE(recovered.size() == 1u);
  BOOST_TEST(recovered[0]->getValue<std::uint64_t>("step") == 10u);  // as worker 1 last heard
  BOOST_TEST(recovered[0]->getValue<std::uint64_t>("from_step") == 0u);  // no step undone
  BOOST_TEST(cluster.server(0).globalStep() == 11u);  // and the new worker 0's push on top
}

CLUSTER_TEST(a_worker_joining_a_sync_run_a_step_in_does_not_wait_for_a_ps_a_step_behind) {
  // At a sync run's start, a worker joining as the first step is taken can find ps 0 at step 1
  // and ps 1 at step 0, holding that step at its barrier for the new worker's push: had it waited
  // for ps 1 to move on, it would have pushed only after kShardRecoveryWait. Here ps 1 is a step
  // behind for good (restarted without its checkpoint, with nobody holding a copy of its shard),
  // which would keep the worker waiting just as long.
  InProcessCluster cluster(Over::kTransport, flags(2, 1, 100, {"--sync"}));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  auto gradient = smallGradient(cluster);
  std::vector<float> params(gradient.size());
  {
    auto first = cluster.client(0);
    first->connect();
    BOOST_REQUIRE(first->pushPull(ps::Gradient(gradient.data()), params.data(), 1, 0).applied);
  }
  cluster.stopPs(1);
  std::filesystem::remove(cluster.checkpointPath(1));
  cluster.startPs(1);
  BOOST_REQUIRE(cluster.server(0).globalStep() == 1u);
  BOOST_REQUIRE(cluster.server(1).globalStep() == 0u);

  const auto start = std::chrono::steady_clock::now();
  auto worker = cluster.client(0);
  worker->connect();
  BOOST_TEST(worker->pushPull(ps::Gradient(gradient.data()), params.data(), 1, 0).applied);
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(10)));  // not 30
  BOOST_TEST(peersOf(cluster, 0, "waiting").empty());
  BOOST_TEST(cluster.server(0).globalStep() == 2u);
  BOOST_TEST(cluster.server(1).globalStep() == 1u);
}

CLUSTER_TEST(a_ps_that_lost_its_checkpoint_takes_its_shard_from_the_workers) {
  const auto settings = flags(2, 2, 1500);
  double unfaulted = 0;
  {
    InProcessCluster cluster(Over::kTransport, settings);
    for (int i = 0; i < 2; ++i) cluster.startPs(i);
    for (int w = 0; w < 2; ++w) cluster.startWorker(w);
    unfaulted = cluster.joinWorkers()[0].testAccuracy.value_or(0);
  }
  InProcessCluster cluster(Over::kTransport, settings);
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return globalStep(cluster) >= 500; }, std::chrono::seconds(30)));
  const auto stopped = cluster.stopPs(1);
  std::filesystem::remove(cluster.checkpointPath(1));  // its disk is lost with it
  cluster.startPs(1);
  auto results = cluster.joinWorkers();
  for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == 1500u);
  BOOST_TEST(results[0].globalStep == 1500u);
  // ps 1 took a worker's copy at the step that worker last heard of from it: short of where it
  // stopped by the steps the other worker made meanwhile (many, if that one was descheduled).
  const auto recovered = eventsNamed(cluster.psReports(1), "recovered");
  BOOST_REQUIRE(recovered.size() == 1u);
  const auto step = recovered[0]->getValue<std::uint64_t>("step");
  BOOST_TEST(step > 0u);
  BOOST_TEST(step <= stopped);
  BOOST_TEST_MESSAGE("ps 1 stopped at step " << stopped << ", recovered at " << step);
  // It applied the pushes from there on, not a whole run's.
  BOOST_TEST(staleness(cluster, 1).first == 1500u - step);
  const double accuracy = results[0].testAccuracy.value_or(0);
  BOOST_TEST(accuracyCost(accuracy, unfaulted) <= 0.02,
             "accuracy " << accuracy << ", without the fault " << unfaulted);
}

CLUSTER_TEST(a_ps_back_from_a_stale_checkpoint_takes_the_workers_later_copy) {
  // ps 1's checkpoint is put back to an older one while it is down (a volume restored, a kill
  // between checkpoints): it restores that, and the workers, who saw it further on, give it
  // their copy, so the steps since are not trained again. (A worker that knows ps 1 at no later
  // step, one that missed its last life, would push first and the ps would take no copy: so
  // both workers train with ps 1's second life before it stops.)
  InProcessCluster cluster(Over::kTransport, flags(2, 2, 3000, {"--concurrent-workers", "0"}));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  BOOST_REQUIRE(waitFor([&] { return globalStep(cluster) >= 300; }, std::chrono::seconds(30)));
  const auto stale = cluster.stopPs(1);  // writes its checkpoint at `stale`
  const auto aside = cluster.checkpointPath(1) + ".stale";
  std::filesystem::copy_file(cluster.checkpointPath(1), aside);
  cluster.startPs(1);
  BOOST_REQUIRE(waitFor(
      [&] { return eventsNamed(cluster.psReports(1), "connected").size() >= 2u; },
      std::chrono::seconds(30)));
  const auto joined = cluster.server(1).globalStep();
  BOOST_REQUIRE(waitFor([&] { return cluster.server(1).globalStep() >= joined + 300; },
                        std::chrono::seconds(30)));
  const auto stopped = cluster.stopPs(1);
  std::filesystem::rename(aside, cluster.checkpointPath(1));
  cluster.startPs(1);
  auto results = cluster.joinWorkers();
  BOOST_TEST(results[0].globalStep == 3000u);
  const auto restored = eventsNamed(cluster.psReports(1), "restored");
  BOOST_REQUIRE(!restored.empty());
  BOOST_TEST(restored.back()->getValue<std::uint64_t>("step") == stale);
  const auto recovered = eventsNamed(cluster.psReports(1), "recovered");
  BOOST_REQUIRE(recovered.size() == 1u);
  const auto step = recovered[0]->getValue<std::uint64_t>("step");
  BOOST_TEST_MESSAGE("ps 1 restored step " << stale << " after it stopped at " << stopped
                                           << ", recovered at " << step);
  BOOST_TEST(recovered[0]->getValue<std::uint64_t>("from_step") == stale);
  BOOST_TEST(step > stale);
  BOOST_TEST(step <= stopped);
  BOOST_TEST(staleness(cluster, 1).first == 3000u - step);  // this life's pushes, from there on
}

CLUSTER_TEST(one_worker_computing_at_a_time_makes_every_push_fresh) {
  // ps 0 lets one of four workers compute at a time: each starts from the parameters with every
  // push so far, on both ps (the second is pulled again after ps 0 held the answer).
  InProcessCluster cluster(Over::kTransport, flags(2, 4, 400, {"--concurrent-workers", "1"}));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 4; ++w) cluster.startWorker(w);
  auto results = cluster.joinWorkers();
  for (const auto& [index, result] : results) BOOST_TEST(result.globalStep == 400u);
  auto [count, sum] = staleness(cluster, 0);
  BOOST_TEST(count == 400u);
  BOOST_TEST(sum == 0.0);
  // ps 1 may apply the one worker's push after it let the next one pull: at most one step old.
  auto [count1, sum1] = staleness(cluster, 1);
  BOOST_TEST(count1 == 400u);
  BOOST_TEST(sum1 <= 400.0);
}

CLUSTER_TEST(workers_computing_at_once_push_stale_gradients) {
  // The contrast: unbounded, four workers' pushes land on parameters others have moved on.
  InProcessCluster cluster(Over::kTransport, flags(2, 4, 400, {"--concurrent-workers", "0"}));
  for (int i = 0; i < 2; ++i) cluster.startPs(i);
  for (int w = 0; w < 4; ++w) cluster.startWorker(w);
  cluster.joinWorkers();
  auto [count, sum] = staleness(cluster, 0);
  BOOST_TEST(count == 400u);
  BOOST_TEST(sum > 0.0);
}

CLUSTER_TEST(a_ps_reports_the_staleness_of_its_pushes) {
  InProcessCluster cluster(Over::kTransport, flags(1, 2, 200, {"--concurrent-workers", "0"}));
  cluster.startPs(0);
  for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  cluster.joinWorkers();
  auto status = parseObject(cluster.psReports(0).status());
  auto [count, sum] = staleness(cluster, 0);
  BOOST_TEST(status->getObject("staleness")->getValue<double>("mean") == sum / double(count));
  auto recorded = parseObject(cluster.psReports(0).events.since(0))->getArray("events");
  int summaries = 0;
  for (size_t i = 0; i < recorded->size(); ++i) {
    auto e = recorded->getObject(unsigned(i));
    if (e->getValue<std::string>("event") != "staleness") continue;
    ++summaries;
    BOOST_TEST(e->getValue<std::uint64_t>("pushes") == 200u);
    BOOST_TEST(e->getValue<double>("mean") == sum / 200.0);
  }
  BOOST_TEST(summaries == 1);
}
