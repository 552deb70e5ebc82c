#define BOOST_TEST_MODULE observe
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "pstrain/app/child_process.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/blas_core.hpp"
#include "support/events.hpp"
#include "support/http.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"
#include "support/prometheus.hpp"

// A ps and a worker as separate processes, watched through their HTTP endpoints.

using namespace pstrain::testing;

namespace {

double metric(int port, const std::string& name, const std::string& labels) {
  auto samples = parsePrometheus(httpGet(port, "/metrics").body);
  auto it = samples.find(name + "{" + labels + "}");
  return it == samples.end() ? -1 : it->second;
}

struct Cluster {
  TempDir data;
  TempDir logs;
  std::vector<int> ports = pstrain::net::freeLoopbackPorts(4);  // ps, ps http, worker, worker http
  std::unique_ptr<pstrain::app::ChildProcess> ps;
  std::unique_ptr<pstrain::app::ChildProcess> worker;

  Cluster() { writeSyntheticMnist(data.path(), 2000, 200, false); }

  std::unique_ptr<pstrain::app::ChildProcess> start(const std::string& role, int port,
                                                     int httpPort) {
    std::string dir = logs.file(role);
    std::filesystem::create_directories(dir);
    std::vector<std::string> argv{
        pstrainBinary(), "run", "--role", role, "--index", "0", "--ps-hosts",
        "127.0.0.1:" + std::to_string(ports[0]), role == "ps" ? "--ps-port" : "--worker-port",
        std::to_string(port), "--http-port", std::to_string(httpPort), "--data-dir", data.path(),
        "--log-dir", dir, "--log-to-stdout", "false", "--train-steps", "1000000",
        "--batch-size", "20", "--hidden-units", "16"};
    return std::make_unique<pstrain::app::ChildProcess>(argv, "/dev/null", dir + "/stderr.log");
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(probes_and_metrics_follow_a_live_cluster) {
  Cluster cluster;
  const int psHttp = cluster.ports[1];
  const int workerHttp = cluster.ports[3];
  // Labels sorted by name, as parsePrometheus gives them.
  const std::string workerLabels = "ordinal=\"0\",role=\"worker\"";
  const std::string psLabels = "ordinal=\"0\",role=\"ps\"";

  // The worker starts first: alive, but not ready while no ps answers.
  cluster.worker = cluster.start("worker", cluster.ports[2], workerHttp);
  BOOST_REQUIRE(waitFor([&] { return httpGet(workerHttp, "/healthz").status == 200; },
                        std::chrono::seconds(20)));
  BOOST_TEST(httpGet(workerHttp, "/readyz").status == 503);
  BOOST_TEST(httpGet(workerHttp, "/readyz").body == "waiting\n");

  cluster.ps = cluster.start("ps", cluster.ports[0], psHttp);
  BOOST_REQUIRE(waitFor([&] { return httpGet(workerHttp, "/readyz").status == 200; },
                        std::chrono::seconds(20)));
  BOOST_TEST(httpGet(psHttp, "/readyz").status == 200);

  // The global step grows between two scrapes.
  double first = 0;
  BOOST_REQUIRE(waitFor([&] { return (first = metric(workerHttp, "pstrain_global_step",
                                                      workerLabels)) > 0; },
                        std::chrono::seconds(20)));
  BOOST_TEST(waitFor([&] { return metric(workerHttp, "pstrain_global_step", workerLabels) > first; },
                     std::chrono::seconds(20)));

  // What the ps reports is what its record says: the event of that step appears.
  double psStep = metric(psHttp, "pstrain_global_step", psLabels);
  BOOST_REQUIRE(psStep > 0);
  BOOST_TEST(waitFor(
                 [&] {
                   auto last = lastEventOf(cluster.logs.file("ps"), "step");
                   return last && last->getValue<double>("step") >= psStep;
                 },
                 std::chrono::seconds(10)),
             "no step event for global step " << psStep << " in the ps's events.jsonl");

  // /events: the latest events, and those after a sequence number.
  auto events = parseObject(httpGet(psHttp, "/events?after=0").body);
  const auto next = events->getValue<std::uint64_t>("next");
  auto list = events->getArray("events");
  BOOST_REQUIRE(list->size() > 0u);
  BOOST_TEST(list->size() <= next);
  BOOST_TEST(list->getObject(0)->getValue<std::string>("role") == "ps");
  const std::string afterNext = "/events?after=" + std::to_string(next);
  BOOST_TEST(waitFor(
      [&] { return parseObject(httpGet(psHttp, afterNext).body)->getArray("events")->size() > 0; },
      std::chrono::seconds(10)));
  auto later = parseObject(httpGet(psHttp, afterNext).body);
  BOOST_TEST(later->getValue<std::uint64_t>("next") > next);
  auto newer = later->getArray("events")->getObject(0);
  BOOST_TEST(newer->getValue<double>("time") >=
             list->getObject(unsigned(list->size() - 1))->getValue<double>("time"));
  BOOST_TEST(httpGet(psHttp, "/events?after=soon").status == 400);

  // /history: the whole run's loss curve so far, from its first step, and where /events goes on.
  auto history = parseObject(httpGet(psHttp, "/history").body);
  BOOST_TEST(history->getValue<std::uint64_t>("next") >= next);
  auto loss = history->getArray("loss");
  BOOST_REQUIRE(loss->size() > 0u);
  BOOST_TEST(loss->getArray(0)->getElement<std::uint64_t>(0) <= 10u);
  auto refused = httpGet(psHttp, "/history?points=10");
  BOOST_TEST(refused.status == 400);
  BOOST_TEST(parseObject(refused.body)->getValue<std::string>("error") ==
             "/history takes no query parameters");

  auto samples = parsePrometheus(httpGet(psHttp, "/metrics").body);
  BOOST_TEST(samples.at("pstrain_received_bytes_total{" + psLabels + "}") > 0);
  BOOST_TEST(samples.at("pstrain_push_seconds_count{" + psLabels + "}") > 0);
  BOOST_TEST(samples.at("pstrain_state{" + psLabels + ",state=\"training\"}") == 1);

  auto status = parseObject(httpGet(workerHttp, "/status").body);
  BOOST_TEST(status->getValue<std::string>("role") == "worker");
  BOOST_TEST(status->getValue<std::string>("state") == "training");
  BOOST_TEST(status->getArray("peers")->size() == 1u);
  // The kernels it computes with, and the same in the metrics, so a slow process says why.
  const std::string blasCore = expectedBlasCore();
  BOOST_TEST(status->getValue<std::string>("blas_core") == blasCore);
  BOOST_TEST(metric(workerHttp, "pstrain_build_info",
                    "blas_core=\"" + blasCore + "\"," + workerLabels + ",version=\"" PSTRAIN_VERSION
                                   "\"") == 1);
  BOOST_TEST(httpGet(psHttp, "/nowhere").status == 404);

  // The worker gathers the state of every ps, as the ps told it where its /status is, and each
  // ps's roster of workers.
  auto gathered = parseObject(httpGet(workerHttp, "/cluster").body)->getArray("ps");
  BOOST_REQUIRE_EQUAL(gathered->size(), 1u);
  BOOST_TEST(gathered->getObject(0)->getValue<std::string>("ps") ==
             "127.0.0.1:" + std::to_string(cluster.ports[0]));
  auto psStatus = gathered->getObject(0)->getObject("status");
  BOOST_REQUIRE(psStatus);
  BOOST_TEST(psStatus->getValue<std::string>("role") == "ps");
  BOOST_TEST(psStatus->getValue<std::string>("state") == "training");
  BOOST_TEST(psStatus->getValue<int>("blas_threads") == 1);  // its parallelism is its connections
  auto roster = psStatus->getArray("workers");
  BOOST_REQUIRE_EQUAL(roster->size(), 1u);
  BOOST_TEST(roster->getObject(0)->getValue<int>("index") == 0);
  BOOST_TEST(roster->getObject(0)->getValue<std::string>("state") == "training");
  BOOST_TEST(roster->getObject(0)->getValue<std::uint64_t>("local_step") > 0u);
  BOOST_TEST(httpGet(psHttp, "/cluster").status == 404);  // a ps lists its workers in /status

  // A ps that is gone is reported as such, with the reason.
  cluster.ps.reset();
  auto gone = parseObject(httpGet(workerHttp, "/cluster").body)->getArray("ps")->getObject(0);
  BOOST_TEST(!gone->has("status"));
  BOOST_TEST(gone->getValue<std::string>("error").find("cannot fetch http://127.0.0.1:" +
                                                       std::to_string(psHttp) + "/status") == 0u);
}
