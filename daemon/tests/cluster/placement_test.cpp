#define BOOST_TEST_MODULE placement
#include <boost/test/unit_test.hpp>

#include "pstrain/cluster/placement.hpp"
#include "pstrain/common/error.hpp"

using namespace pstrain::cluster;
using pstrain::Role;
using pstrain::config::Config;

BOOST_AUTO_TEST_CASE(parses_statefulset_pod_names) {
  auto ps = parsePodName("mnist-ps-1");
  BOOST_REQUIRE(ps);
  BOOST_TEST(ps->prefix == "mnist");
  BOOST_TEST((ps->role == Role::kPs));
  BOOST_TEST(ps->ordinal == 1);

  auto worker = parsePodName("my-big-run-worker-12");
  BOOST_REQUIRE(worker);
  BOOST_TEST(worker->prefix == "my-big-run");
  BOOST_TEST((worker->role == Role::kWorker));
  BOOST_TEST(worker->ordinal == 12);

  // The last role segment decides: a release may itself contain "-ps-".
  auto nested = parsePodName("ops-ps-2-worker-0");
  BOOST_REQUIRE(nested);
  BOOST_TEST(nested->prefix == "ops-ps-2");
  BOOST_TEST((nested->role == Role::kWorker));
}

BOOST_AUTO_TEST_CASE(rejects_names_that_are_not_pods_of_a_role) {
  for (const char* name : {"mnist", "mnist-ps", "mnist-ps-", "mnist-chief-0", "-ps-0", "ps-0",
                           "mnist-ps-x", "Mnist-ps-0", "mnist-ps-1.mnist-ps"}) {
    BOOST_TEST(!parsePodName(name).has_value(), name);
  }
}

BOOST_AUTO_TEST_CASE(peer_names_use_the_headless_service) {
  auto peers = psEndpoints("mnist", "mnist-ps", 2, 8000, "", "");
  BOOST_REQUIRE(peers.size() == 2u);
  BOOST_TEST(peers[0].toString() == "mnist-ps-0.mnist-ps:8000");
  BOOST_TEST(peers[1].toString() == "mnist-ps-1.mnist-ps:8000");
  auto fqdn = psEndpoints("mnist", "mnist-ps", 1, 8000, "team", "cluster.local");
  BOOST_TEST(fqdn[0].host == "mnist-ps-0.mnist-ps.team.svc.cluster.local");
}

BOOST_AUTO_TEST_CASE(places_a_pod_from_its_name) {
  Config config;
  config.ps = 2;
  config.workers = 2;
  auto placement = place(config, "mnist-worker-1", "");
  BOOST_TEST((placement.role == Role::kWorker));
  BOOST_TEST(placement.index == 1);
  BOOST_TEST(placement.listenPort == 9000);
  BOOST_REQUIRE(placement.ps.size() == 2u);
  BOOST_TEST(placement.ps[1].toString() == "mnist-ps-1.mnist-ps:8000");

  config.psService = "custom";
  config.podName = "mnist-ps-0";
  auto ps = place(config, "ignored-host", "");
  BOOST_TEST((ps.role == Role::kPs));
  BOOST_TEST(ps.listenPort == 8000);
  BOOST_TEST(ps.ps[0].host == "mnist-ps-0.custom");
}

BOOST_AUTO_TEST_CASE(places_a_worker_beyond_the_configured_count) {
  // A StatefulSet scaled up (kubectl scale) starts pods whose configuration counts fewer workers.
  Config config;
  config.workers = 2;
  auto placement = place(config, "mnist-worker-3", "");
  BOOST_TEST((placement.role == Role::kWorker));
  BOOST_TEST(placement.index == 3);
}

BOOST_AUTO_TEST_CASE(flags_and_ps_hosts_place_a_process_outside_kubernetes) {
  Config config;
  config.ps = 2;
  config.role = Role::kWorker;
  config.index = 0;
  config.psHosts = {"127.0.0.1:7001", "[::1]:7002"};
  auto placement = place(config, "laptop", "");
  BOOST_TEST(placement.ps[0].toString() == "127.0.0.1:7001");
  BOOST_TEST(placement.ps[1].host == "::1");
  BOOST_TEST(placement.ps[1].port == 7002);
}

BOOST_AUTO_TEST_CASE(refuses_what_cannot_be_placed) {
  Config config;
  BOOST_CHECK_THROW(place(config, "laptop", ""), pstrain::ConfigError);
  // A ps beyond the run's ps is placed: it is leaving, and ps::Server decides whether it serves.
  BOOST_TEST(place(config, "mnist-ps-1", "").index == 1);  // 1 ps
  config.role = Role::kWorker;
  config.index = 0;
  BOOST_CHECK_THROW(place(config, "laptop", ""), pstrain::ConfigError);  // no ps addresses
  config.clusterDomain = "cluster.local";
  BOOST_CHECK_THROW(place(config, "mnist-worker-0", ""), pstrain::ConfigError);  // no namespace
}
