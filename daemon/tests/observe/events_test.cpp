#define BOOST_TEST_MODULE events
#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/progress.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"

using namespace pstrain::observe;
using pstrain::testing::parseObject;
using pstrain::testing::TempDir;

namespace {

std::vector<std::string> eventNames(const Poco::JSON::Array::Ptr& events) {
  std::vector<std::string> names;
  for (size_t i = 0; i < events->size(); ++i) {
    names.push_back(events->getObject(unsigned(i))->getValue<std::string>("event"));
  }
  return names;
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_line_is_one_object_with_time_role_index_and_fields) {
  TempDir dir;
  const auto path = dir.file(kEventsFile);
  {
    Events events("ps", 1, path);
    events.emit(event::psStep(1, 42, 3, 17, 0.25f, 1.5));
    events.emit(event::checkpoint(1, 42, "/ckpt/\"odd\" name.bin"));
    events.emit(event::psStep(1, 43, 0, 1, std::numeric_limits<float>::quiet_NaN(), 0));
    pstrain::log::flush();
  }
  auto lines = pstrain::testing::lines(pstrain::testing::readText(path));
  BOOST_REQUIRE(lines.size() == 3u);
  auto step = parseObject(lines[0]);
  BOOST_TEST(step->getValue<std::string>("role") == "ps");
  BOOST_TEST(step->getValue<int>("index") == 1);
  BOOST_TEST(step->getValue<std::string>("event") == "step");
  BOOST_TEST(step->getValue<std::uint64_t>("step") == 42u);
  BOOST_TEST(step->getValue<double>("loss") == 0.25);
  BOOST_TEST(step->getValue<int>("worker") == 3);
  BOOST_TEST(step->getValue<std::uint64_t>("local_step") == 17u);
  BOOST_TEST(step->getValue<double>("staleness") == 1.5);
  const double time = step->getValue<double>("time");
  BOOST_TEST(std::abs(time - pstrain::unixTime()) < 60);
  BOOST_TEST(parseObject(lines[1])->getValue<std::string>("path") == "/ckpt/\"odd\" name.bin");
  BOOST_TEST(parseObject(lines[2])->isNull("loss"));  // JSON has no NaN
}

BOOST_AUTO_TEST_CASE(everything_but_steps_reaches_the_file_at_once) {
  TempDir dir;
  const auto path = dir.file(kEventsFile);
  Events events("worker", 0, path);
  events.emit(event::lost(0, "a:1", "connection reset"));
  // No flush: a reader sees it as soon as it is recorded.
  auto read = readEvents(path);
  BOOST_REQUIRE(read.size() == 1u);
  BOOST_TEST(read[0]->getValue<std::string>("event") == "lost");
  BOOST_TEST(read[0]->getValue<std::string>("reason") == "connection reset");
}

BOOST_AUTO_TEST_CASE(a_restarted_process_starts_a_line_of_its_own_after_a_partial_one) {
  TempDir dir;
  const auto path = dir.file(kEventsFile);
  {
    std::ofstream out(path);
    out << R"({"time":1.0,"role":"ps","index":0,"event":"step","st)";  // killed mid-line
  }
  Events events("ps", 0, path);
  events.emit(event::started("1", "ps", 0, 1, "sync", "a:1", "Haswell", "Haswell", 1, 42, "q4", "q2"));
  auto read = readEvents(path);
  BOOST_REQUIRE(read.size() == 1u);
  BOOST_TEST(read[0]->getValue<int>("pid") == 42);
}

BOOST_AUTO_TEST_CASE(reads_from_a_byte_on_what_a_restarted_process_appended) {
  TempDir dir;
  const auto path = dir.file(kEventsFile);
  { Events("ps", 0, path).emit(event::state(State::kTraining)); }
  const auto restartedAt = std::filesystem::file_size(path);
  Events("ps", 0, path)
      .emit(event::started("1", "ps", 0, 1, "sync", "a:1", "Haswell", "Haswell", 1, 43, "q4", "q2"));
  auto read = readEvents(path, restartedAt);
  BOOST_REQUIRE(read.size() == 1u);
  BOOST_TEST(read[0]->getValue<std::string>("event") == "started");
}

BOOST_AUTO_TEST_CASE(since_returns_the_events_after_a_sequence_number) {
  Events events("worker", 2, "", 3);
  auto empty = parseObject(events.since(0));
  BOOST_TEST(empty->getValue<std::uint64_t>("next") == 0u);
  BOOST_TEST(empty->getArray("events")->size() == 0u);

  events.emit(event::state(State::kTraining));
  events.emit(event::workerStep(2, 10, 1, 0.5f));
  auto first = parseObject(events.since(0));
  BOOST_TEST(first->getValue<std::uint64_t>("next") == 2u);
  BOOST_TEST(eventNames(first->getArray("events")) == (std::vector<std::string>{"state", "step"}));

  events.emit(event::accuracy(1, 10, 0.75, 1.0e9));
  auto next = parseObject(events.since(2));
  BOOST_TEST(next->getValue<std::uint64_t>("next") == 3u);
  BOOST_TEST(eventNames(next->getArray("events")) == std::vector<std::string>{"accuracy"});
  BOOST_TEST(next->getArray("events")->getObject(0)->getValue<double>("accuracy") == 0.75);
  BOOST_TEST(parseObject(events.since(3))->getArray("events")->size() == 0u);

  // Only the latest 3 are kept: asking from 0 gives those.
  events.emit(event::done("worker", 10, 1.5));
  auto kept = parseObject(events.since(0));
  BOOST_TEST(kept->getValue<std::uint64_t>("next") == 4u);
  BOOST_TEST(eventNames(kept->getArray("events")) ==
             (std::vector<std::string>{"step", "accuracy", "done"}));
  // A number from before a restart, beyond the newest: everything kept.
  BOOST_TEST(parseObject(events.since(100))->getArray("events")->size() == 3u);
}

BOOST_AUTO_TEST_CASE(an_exiting_process_waits_for_a_reader_that_watches_to_be_sent_every_event) {
  using std::chrono::milliseconds;
  Events events("worker", 0);
  events.emit(event::state(State::kTraining));
  // Nobody has read: no wait.
  auto start = std::chrono::steady_clock::now();
  events.awaitReader(milliseconds(3000), milliseconds(5000));
  BOOST_TEST(pstrain::secondsSince(start) < 1.0);

  std::uint64_t next = 0;
  events.since(0, &next);
  events.delivered(next);
  events.emit(event::state(State::kCompleted));
  // A reader that watches, sent every event but the last: the wait ends when it is sent that.
  std::thread reader([&] {
    std::this_thread::sleep_for(milliseconds(200));  // the page's next poll
    std::uint64_t newest = 0;
    auto body = parseObject(events.since(next, &newest));
    BOOST_TEST(eventNames(body->getArray("events")) == std::vector<std::string>{"state"});
    events.delivered(newest);
  });
  start = std::chrono::steady_clock::now();
  events.awaitReader(milliseconds(3000), milliseconds(5000));
  const double waited = pstrain::secondsSince(start);
  reader.join();
  BOOST_TEST((waited >= 0.15 && waited < 4.0), waited);
  // Sent everything already: no wait.
  start = std::chrono::steady_clock::now();
  events.awaitReader(milliseconds(3000), milliseconds(5000));
  BOOST_TEST(pstrain::secondsSince(start) < 1.0);
  // A reader not seen within `recent` is not waited for.
  events.emit(event::state(State::kWaiting));
  std::this_thread::sleep_for(milliseconds(60));
  start = std::chrono::steady_clock::now();
  events.awaitReader(milliseconds(50), milliseconds(5000));
  BOOST_TEST(pstrain::secondsSince(start) < 1.0);
}

BOOST_AUTO_TEST_CASE(a_partial_last_line_is_skipped_and_a_missing_file_refused) {
  TempDir dir;
  const auto path = dir.file(kEventsFile);
  {
    std::ofstream out(path);
    out << R"({"time":1.0,"role":"ps","index":0,"event":"state","state":"training"})" << "\n"
        << R"({"time":1.1,"role":"ps","index":0,"event":"st)";
  }
  auto read = readEvents(path);
  BOOST_REQUIRE(read.size() == 1u);
  BOOST_TEST(read[0]->getValue<std::string>("state") == "training");
  BOOST_CHECK_THROW(readEvents(dir.file("missing.jsonl")), pstrain::IoError);
}

BOOST_AUTO_TEST_CASE(progress_records_each_change_of_state_once) {
  Events events("ps", 0);
  Progress progress(pstrain::Role::kPs, 0, 10, events);
  progress.setState(State::kTraining);
  progress.setState(State::kTraining);
  progress.setState(State::kCompleted);
  auto all = parseObject(events.since(0))->getArray("events");
  BOOST_REQUIRE(all->size() == 3u);
  std::vector<std::string> states;
  for (size_t i = 0; i < all->size(); ++i) {
    states.push_back(all->getObject(unsigned(i))->getValue<std::string>("state"));
  }
  BOOST_TEST(states == (std::vector<std::string>{"waiting", "training", "completed"}));
}

BOOST_AUTO_TEST_CASE(history_holds_the_whole_run_after_since_has_let_its_start_go) {
  Events events("worker", 0, "", 8, 16);
  for (std::uint64_t step = 1; step <= 100; ++step) {
    events.emit(event::workerStep(0, step, step, 1.0f / float(step)));
    if (step % 50 == 0) {
      events.emit(event::accuracy(step, step, 0.5 + double(step) / 1000, 1.0e9 + double(step)));
    }
  }
  events.emit(event::workerStep(0, 101, 101, std::numeric_limits<float>::quiet_NaN()));  // no point
  // /events keeps the latest 8 only.
  auto recent = parseObject(events.since(0))->getArray("events");
  BOOST_TEST(recent->getObject(0)->getValue<std::uint64_t>("step") > 90u);

  auto history = parseObject(events.history());
  BOOST_TEST(history->getValue<std::uint64_t>("next") == 103u);
  auto loss = history->getArray("loss");
  BOOST_TEST(loss->size() <= 17u);
  BOOST_TEST(loss->getArray(0)->getElement<std::uint64_t>(0) == 1u);
  BOOST_TEST(loss->getArray(0)->getElement<double>(2) == 1.0);
  BOOST_TEST(loss->getArray(unsigned(loss->size() - 1))->getElement<std::uint64_t>(0) == 100u);
  auto accuracy = history->getArray("accuracy");
  BOOST_REQUIRE(accuracy->size() == 2u);
  BOOST_TEST(accuracy->getArray(1)->getElement<std::uint64_t>(0) == 100u);
  BOOST_TEST(accuracy->getArray(1)->getElement<double>(1) == 1.0e9 + 100);  // when taken
  BOOST_TEST(accuracy->getArray(1)->getElement<double>(2) == 0.6);
}

BOOST_AUTO_TEST_CASE(the_log_lines_are_rendered_from_the_event_recorded) {
  TempDir dir;
  pstrain::log::init(dir.path(), false);
  Events events("ps", 1, dir.file(kEventsFile));
  const auto step = event::psStep(1, 400, 3, 17, 0.25f, 1.5);
  events.emit(step);
  const auto done = event::done("ps", 400, 12.5);
  events.emit(done);
  pstrain::log::flush();
  const auto log = pstrain::testing::readText(dir.file("deploy.log"));
  // The seed's wording, which people and the chart's docs tail.
  BOOST_TEST(log.find("[ps] PS 1: global step 400 done (worker 3, local step 17, loss 0.2500)\n") !=
             std::string::npos, log);
  BOOST_TEST(log.find(fmt::format("[ps] Training ends @ {:.6f}\n", done.time)) != std::string::npos,
             log);
  BOOST_TEST(log.find("[ps] Training elapsed time: 12.500000 s\n") != std::string::npos, log);
  auto recorded = readEvents(dir.file(kEventsFile));
  BOOST_REQUIRE(recorded.size() == 2u);
  BOOST_TEST(recorded[0]->getValue<std::uint64_t>("step") == 400u);
  BOOST_TEST(recorded[0]->getValue<std::uint64_t>("local_step") == 17u);
  BOOST_TEST(recorded[1]->getValue<double>("elapsed_s") == 12.5);
  BOOST_TEST(std::abs(recorded[1]->getValue<double>("time") - done.time) < 0.001);
}

BOOST_AUTO_TEST_CASE(a_ps_step_and_a_worker_step_have_the_same_fields) {
  auto keys = [](const Event& e) {
    std::vector<std::string> names;
    for (const auto& field : e.fields) names.push_back(field.key);
    return names;
  };
  const auto ps = event::psStep(0, 10, 1, 5, 0.5f, 2.0);
  const auto worker = event::workerStep(1, 10, 5, 0.5f);
  BOOST_TEST(keys(ps) == keys(worker));
  BOOST_TEST(keys(ps) ==
             (std::vector<std::string>{"step", "local_step", "worker", "loss", "staleness"}));
}
