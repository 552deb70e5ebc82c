#define BOOST_TEST_MODULE observe
#include <boost/test/unit_test.hpp>

#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "pstrain/app/child_process.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/blas_core.hpp"
#include "support/idx_files.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"
#include "support/prometheus.hpp"

// A ps and a worker as separate processes, watched through their HTTP endpoints.

using namespace pstrain::testing;

namespace {

struct HttpResult {
  int status = 0;
  std::string body;
};

HttpResult httpGet(int port, const std::string& path) {
  try {
    Poco::Net::HTTPClientSession session("127.0.0.1", static_cast<Poco::UInt16>(port));
    session.setTimeout(Poco::Timespan(2, 0));
    Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_GET, path);
    session.sendRequest(request);
    Poco::Net::HTTPResponse response;
    auto& stream = session.receiveResponse(response);
    HttpResult result{int(response.getStatus()), {}};
    Poco::StreamCopier::copyToString(stream, result.body);
    return result;
  } catch (const Poco::Exception&) {
    return {};  // not listening yet
  }
}

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
  const std::string workerLabels = "role=\"worker\",ordinal=\"0\"";
  const std::string psLabels = "role=\"ps\",ordinal=\"0\"";

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

  // What the ps reports is what its log says: the line of that step appears.
  double psStep = metric(psHttp, "pstrain_global_step", psLabels);
  BOOST_REQUIRE(psStep > 0);
  const std::string line = "PS 0: global step " + std::to_string(long(psStep)) + " done";
  BOOST_TEST(waitFor([&] { return readText(cluster.logs.file("ps/deploy.log")).find(line) !=
                                  std::string::npos; },
                     std::chrono::seconds(10)),
             "missing in the ps log: " << line);

  auto samples = parsePrometheus(httpGet(psHttp, "/metrics").body);
  BOOST_TEST(samples.at("pstrain_received_bytes_total{" + psLabels + "}") > 0);
  BOOST_TEST(samples.at("pstrain_push_seconds_count{" + psLabels + "}") > 0);
  BOOST_TEST(samples.at("pstrain_state{" + psLabels + ",state=\"training\"}") == 1);

  auto status = Poco::JSON::Parser()
                    .parse(httpGet(workerHttp, "/status").body)
                    .extract<Poco::JSON::Object::Ptr>();
  BOOST_TEST(status->getValue<std::string>("role") == "worker");
  BOOST_TEST(status->getValue<std::string>("state") == "training");
  BOOST_TEST(status->getArray("peers")->size() == 1u);
  // The kernels it computes with, and the same in the metrics, so a slow process says why.
  const std::string blasCore = expectedBlasCore();
  BOOST_TEST(status->getValue<std::string>("blas_core") == blasCore);
  BOOST_TEST(metric(workerHttp, "pstrain_build_info",
                    workerLabels + ",blas_core=\"" + blasCore + "\",version=\"" PSTRAIN_VERSION
                                   "\"") == 1);
  BOOST_TEST(httpGet(psHttp, "/nowhere").status == 404);
}
