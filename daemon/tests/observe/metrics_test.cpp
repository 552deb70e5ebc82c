#define BOOST_TEST_MODULE metrics
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/common/blas_core.hpp"
#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/observe/prometheus_exposition.hpp"
#include "pstrain/observe/status_client.hpp"
#include "pstrain/observe/status_json.hpp"
#include "pstrain/observe/worker_roster.hpp"
#include "support/json.hpp"
#include "support/prometheus.hpp"

using namespace pstrain::observe;
using pstrain::Role;

namespace {

// What one process reports and its renderings, as the daemon puts them together.
struct Process {
  Process(Role role, int ordinal, std::uint64_t trainSteps)
      : events(pstrain::roleName(role), ordinal),
        progress(role, ordinal, trainSteps, events),
        meters(role, ordinal),
        exposition(progress, meters) {}

  // /status: a ps's with its workers and the staleness of their pushes.
  std::string status() const {
    return statusJson(progress, progress.role() == Role::kPs ? &workers : nullptr, &meters);
  }

  Events events;
  Progress progress;
  Meters meters;
  WorkerRoster workers;
  PrometheusExposition exposition;
};

}  // namespace

BOOST_AUTO_TEST_CASE(exposition_is_valid_prometheus_text) {
  Process process(Role::kWorker, 1, 500);
  process.progress.recordStep(42, 0.5f);
  process.meters.observePushSeconds(0.0003);
  process.meters.observePushSeconds(2.0);
  auto samples = pstrain::testing::parsePrometheus(process.exposition.text());
  // Labels sorted by name, as parsePrometheus gives them.
  const std::string labels = "ordinal=\"1\",role=\"worker\"";
  BOOST_TEST(samples.at("pstrain_global_step{" + labels + "}") == 42);
  BOOST_TEST(samples.at("pstrain_train_steps{" + labels + "}") == 500);
  BOOST_TEST(samples.at("pstrain_loss{" + labels + "}") == 0.5);
  BOOST_TEST(std::isnan(samples.at("pstrain_test_accuracy{" + labels + "}")));
  BOOST_TEST(samples.at("pstrain_state{" + labels + ",state=\"waiting\"}") == 1);
  BOOST_TEST(samples.at("pstrain_state{" + labels + ",state=\"training\"}") == 0);
  BOOST_TEST(samples.at("pstrain_build_info{blas_core=\"" + pstrain::blasCoreInUse() + "\"," +
                        labels + ",version=\"" PSTRAIN_VERSION "\"}") == 1);
  process.meters.traffic.sent += 300;
  ++process.meters.reconnects;
  samples = pstrain::testing::parsePrometheus(process.exposition.text());
  BOOST_TEST(samples.at("pstrain_sent_bytes_total{" + labels + "}") == 300);
  BOOST_TEST(samples.at("pstrain_reconnects_total{" + labels + "}") == 1);
  process.meters.traffic.sent += 200;
  samples = pstrain::testing::parsePrometheus(process.exposition.text());
  BOOST_TEST(samples.at("pstrain_sent_bytes_total{" + labels + "}") == 500);
}

BOOST_AUTO_TEST_CASE(concurrent_scrapes_report_the_true_count) {
  Process process(Role::kPs, 0, 10);
  // Rounds of two scrapes at once, the count growing between rounds.
  constexpr int kRounds = 200;
  std::atomic<int> round{0};
  std::atomic<int> scraped{0};
  std::vector<std::string> texts[2];
  auto scrape = [&](int scraper) {
    for (int r = 1; r <= kRounds; ++r) {
      while (round < r) std::this_thread::yield();
      texts[scraper].push_back(process.exposition.text());
      ++scraped;
    }
  };
  std::thread first(scrape, 0), second(scrape, 1);
  for (int r = 1; r <= kRounds; ++r) {
    process.meters.traffic.sent += 1000;
    ++process.meters.reconnects;
    round = r;
    while (scraped < 2 * r) std::this_thread::yield();
  }
  first.join();
  second.join();
  const std::string labels = "{ordinal=\"0\",role=\"ps\"}";
  for (const auto& scraper : texts) {
    for (int r = 1; r <= kRounds; ++r) {
      auto samples = pstrain::testing::parsePrometheus(scraper[size_t(r - 1)]);
      BOOST_TEST_REQUIRE(samples.at("pstrain_sent_bytes_total" + labels) == 1000.0 * r);
      BOOST_TEST_REQUIRE(samples.at("pstrain_reconnects_total" + labels) == double(r));
    }
  }
}

BOOST_AUTO_TEST_CASE(histogram_buckets_are_cumulative) {
  Process process(Role::kPs, 0, 10);
  process.meters.observePushSeconds(0.00005);
  process.meters.observePushSeconds(0.003);
  process.meters.observePushSeconds(5.0);
  auto samples = pstrain::testing::parsePrometheus(process.exposition.text());
  const std::string labels = "ordinal=\"0\",role=\"ps\"";
  BOOST_TEST(samples.at("pstrain_push_seconds_bucket{le=\"0.0001\"," + labels + "}") == 1);
  BOOST_TEST(samples.at("pstrain_push_seconds_bucket{le=\"0.005\"," + labels + "}") == 2);
  BOOST_TEST(samples.at("pstrain_push_seconds_bucket{le=\"+Inf\"," + labels + "}") == 3);
  BOOST_TEST(samples.at("pstrain_push_seconds_count{" + labels + "}") == 3);
  BOOST_TEST(std::abs(samples.at("pstrain_push_seconds_sum{" + labels + "}") - 5.00305) < 1e-6);
}

BOOST_AUTO_TEST_CASE(status_json_tells_role_state_and_peers) {
  Process process(Role::kWorker, 0, 100);
  process.progress.setState(State::kTraining);
  process.progress.recordStep(7, 1.25f);
  process.progress.setPeers({"ps a:1", "ps b:2"});
  auto json = pstrain::testing::parseObject(process.status());
  BOOST_TEST(json->getValue<std::string>("role") == "worker");
  BOOST_TEST(json->getValue<std::string>("state") == "training");
  BOOST_TEST(json->getValue<int>("global_step") == 7);
  BOOST_TEST(json->getArray("peers")->size() == 2u);
  BOOST_TEST(!json->has("test_accuracy"));
  BOOST_TEST(json->getValue<std::string>("blas_core") == pstrain::blasCoreInUse());
}

BOOST_AUTO_TEST_CASE(status_json_tells_the_run_and_worker_0s_result_also_as_an_event) {
  Process process(Role::kWorker, 0, 100);
  process.progress.setRun(
      {"/data", "", {784, 128, 10}, "adam", 0.001, 100, false, "q4", "q2", 1.0e9});
  process.meters.traffic.sent += 1000;
  process.meters.traffic.received += 234;
  process.progress.setDataSet("Fashion-MNIST");
  auto json = pstrain::testing::parseObject(process.status());
  auto run = json->getObject("run");
  BOOST_TEST(run->getValue<std::string>("data_set") == "Fashion-MNIST");
  BOOST_TEST(run->getArray("layers")->size() == 3u);
  BOOST_TEST(run->getValue<std::string>("optimizer") == "adam");
  BOOST_TEST(run->getValue<double>("learning_rate") == 0.001);
  BOOST_TEST(run->getValue<int>("batch_size") == 100);
  BOOST_TEST(!run->getValue<bool>("sync"));
  BOOST_TEST(run->getValue<double>("started_at") == 1.0e9);
  BOOST_TEST(run->getValue<std::string>("push_encoding") == "q4");
  BOOST_TEST(run->getValue<std::string>("pull_encoding") == "q2");
  BOOST_TEST(json->getObject("bytes")->getValue<int>("sent") == 1000);
  BOOST_TEST(json->getObject("bytes")->getValue<int>("received") == 234);
  BOOST_TEST(!json->has("result"));  // until the run ends

  process.progress.setResult({"/logs/model.bin", 100, 0.875, 12.5});
  json = pstrain::testing::parseObject(process.status());
  auto result = json->getObject("result");
  BOOST_TEST(result->getValue<std::string>("model_path") == "/logs/model.bin");
  BOOST_TEST(result->getValue<int>("global_step") == 100);
  BOOST_TEST(result->getValue<double>("test_accuracy") == 0.875);
  BOOST_TEST(result->getValue<double>("training_elapsed_s") == 12.5);
  auto recorded = pstrain::testing::parseObject(process.events.since(0))->getArray("events");
  auto model = recorded->getObject(unsigned(recorded->size() - 1));
  BOOST_TEST(model->getValue<std::string>("event") == "model");
  BOOST_TEST(model->getValue<std::string>("model_path") == "/logs/model.bin");
  // The event's time, written to the millisecond, is when the run ended.
  BOOST_TEST(std::abs(model->getValue<double>("time") - result->getValue<double>("ended_at")) < 1e-3);
}

BOOST_AUTO_TEST_CASE(a_ps_status_lists_its_workers_with_their_states) {
  Process process(Role::kPs, 1, 100);
  auto workers = [&] {
    auto json = pstrain::testing::parseObject(process.status());
    std::vector<std::string> described;
    for (const auto& w : *json->getArray("workers")) {
      auto entry = w.extract<Poco::JSON::Object::Ptr>();
      described.push_back(std::to_string(entry->getValue<int>("index")) + " " +
                          entry->getValue<std::string>("state") + " " +
                          std::to_string(entry->getValue<int>("local_step")));
    }
    return described;
  };
  BOOST_TEST(workers().empty());
  process.workers.joined(1);
  process.workers.joined(0);
  process.workers.stepped(1, 12);
  BOOST_TEST(workers() == (std::vector<std::string>{"0 training 0", "1 training 12"}),
             boost::test_tools::per_element());
  // Worker 1 reconnects before its old connection is seen to end: still training.
  process.workers.joined(1);
  process.workers.left(1);
  process.workers.finished(0, 40);
  process.workers.left(0);
  BOOST_TEST(workers() == (std::vector<std::string>{"0 finished 40", "1 training 12"}),
             boost::test_tools::per_element());
  process.workers.left(1);
  BOOST_TEST(workers()[1] == "1 disconnected 12");
  // A worker's status has no workers.
  Process worker(Role::kWorker, 0, 100);
  auto json = pstrain::testing::parseObject(worker.status());
  BOOST_TEST(!json->has("workers"));
}

BOOST_AUTO_TEST_CASE(a_ps_status_tells_each_workers_loss_and_when_it_was_last_heard_from) {
  Process process(Role::kPs, 0, 100);
  process.workers.joined(0);
  process.workers.joined(1);
  process.workers.stepped(0, 5);
  process.workers.lossOf(0, 0.25f);
  process.workers.lossOf(1, std::numeric_limits<float>::quiet_NaN());
  auto json = pstrain::testing::parseObject(process.status());
  auto first = json->getArray("workers")->getObject(0);
  BOOST_TEST(first->getValue<double>("loss") == 0.25);
  const double seen = first->getValue<double>("seconds_since_seen");
  BOOST_TEST((seen >= 0 && seen < 5));
  BOOST_TEST(!json->getArray("workers")->getObject(1)->has("loss"));  // not known yet
}

// What `pstrain local` reads to stop a ps it took out of the list once a re-cut has left it out.
BOOST_AUTO_TEST_CASE(a_ps_status_tells_the_cut_it_serves) {
  Process process(Role::kPs, 2, 100);
  BOOST_TEST(!pstrain::testing::parseObject(process.status())->has("cut"));
  process.progress.setCut({1, 3, 2, 70000, 31770});
  auto cut = pstrain::testing::parseObject(process.status())->getObject("cut");
  BOOST_TEST(cut->getValue<int>("generation") == 1);
  BOOST_TEST(cut->getValue<int>("ps_count") == 3);
  BOOST_TEST(cut->getValue<int>("cut_index") == 2);
  BOOST_TEST(cut->getValue<int>("offset") == 70000);
  BOOST_TEST(cut->getValue<int>("count") == 31770);
  process.progress.setCut({2, 2, 2, 0, 0});  // out of the run
  cut = pstrain::testing::parseObject(process.status())->getObject("cut");
  BOOST_TEST(cut->getValue<int>("count") == 0);
}

BOOST_AUTO_TEST_CASE(durations_are_rounded_once_then_split_so_no_part_reads_60) {
  // Each part rounded alone wrote 59.6 s as "60 s", 119.6 s as "1 min 60 s", 3599.6 s as
  // "59 min 60 s" and 7170 s (119.5 minutes) as "1 h 60 min".
  const std::vector<std::pair<double, std::string>> cases{
      {0.4, "0 s"},         {59.4, "59 s"},          {59.6, "1 min 0 s"},
      {119.6, "2 min 0 s"}, {3599.4, "59 min 59 s"}, {3599.6, "1 h 0 min"},
      {5400, "1 h 30 min"}, {7170, "2 h 0 min"},     {7199.6, "2 h 0 min"}};
  for (const auto& [seconds, text] : cases) {
    BOOST_TEST(durationText(seconds) == text, seconds << " s");
  }
  // The progress line's ETA, in whole seconds rounded up, as the page writes it.
  StatusSnapshot status;
  status.state = "training";
  status.globalStep = 1000;
  status.trainSteps = 120600;
  status.stepsPerSecond = 1000;  // 119.6 s left
  BOOST_TEST(describeProgress(status).find(", ETA 2 min 0 s") != std::string::npos,
             describeProgress(status));
}
