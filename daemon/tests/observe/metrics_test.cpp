#define BOOST_TEST_MODULE metrics
#include <boost/test/unit_test.hpp>

#include <Poco/JSON/Parser.h>

#include "pstrain/common/blas_core.hpp"
#include "pstrain/observe/metrics.hpp"
#include "support/prometheus.hpp"

using namespace pstrain::observe;
using pstrain::config::Role;

BOOST_AUTO_TEST_CASE(exposition_is_valid_prometheus_text) {
  Metrics metrics(Role::kWorker, 1, 500);
  metrics.recordStep(42, 0.5f);
  metrics.pushSeconds.observe(0.0003);
  metrics.pushSeconds.observe(2.0);
  auto samples = pstrain::testing::parsePrometheus(metrics.prometheusText());
  BOOST_TEST(samples.at("pstrain_global_step{role=\"worker\",ordinal=\"1\"}") == 42);
  BOOST_TEST(samples.at("pstrain_train_steps{role=\"worker\",ordinal=\"1\"}") == 500);
  BOOST_TEST(samples.at("pstrain_loss{role=\"worker\",ordinal=\"1\"}") == 0.5);
  BOOST_TEST(samples.at("pstrain_state{role=\"worker\",ordinal=\"1\",state=\"waiting\"}") == 1);
  BOOST_TEST(samples.at("pstrain_build_info{role=\"worker\",ordinal=\"1\",blas_core=\"" +
                        pstrain::blasCoreInUse() + "\",version=\"" PSTRAIN_VERSION "\"}") == 1);
}

BOOST_AUTO_TEST_CASE(histogram_buckets_are_cumulative) {
  Metrics metrics(Role::kPs, 0, 10);
  metrics.pushSeconds.observe(0.00005);
  metrics.pushSeconds.observe(0.003);
  metrics.pushSeconds.observe(5.0);
  auto samples = pstrain::testing::parsePrometheus(metrics.prometheusText());
  const std::string labels = "role=\"ps\",ordinal=\"0\"";
  BOOST_TEST(samples.at("pstrain_push_seconds_bucket{" + labels + ",le=\"0.0001\"}") == 1);
  BOOST_TEST(samples.at("pstrain_push_seconds_bucket{" + labels + ",le=\"0.005\"}") == 2);
  BOOST_TEST(samples.at("pstrain_push_seconds_bucket{" + labels + ",le=\"+Inf\"}") == 3);
  BOOST_TEST(samples.at("pstrain_push_seconds_count{" + labels + "}") == 3);
  BOOST_TEST(std::abs(samples.at("pstrain_push_seconds_sum{" + labels + "}") - 5.00305) < 1e-6);
}

BOOST_AUTO_TEST_CASE(status_json_tells_role_state_and_peers) {
  Metrics metrics(Role::kWorker, 0, 100);
  metrics.setState(State::kTraining);
  metrics.recordStep(7, 1.25f);
  metrics.setPeers({"ps a:1", "ps b:2"});
  auto json = Poco::JSON::Parser().parse(metrics.statusJson()).extract<Poco::JSON::Object::Ptr>();
  BOOST_TEST(json->getValue<std::string>("role") == "worker");
  BOOST_TEST(json->getValue<std::string>("state") == "training");
  BOOST_TEST(json->getValue<int>("global_step") == 7);
  BOOST_TEST(json->getArray("peers")->size() == 2u);
  BOOST_TEST(!json->has("test_accuracy"));
  BOOST_TEST(json->getValue<std::string>("blas_core") == pstrain::blasCoreInUse());
}
