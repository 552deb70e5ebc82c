#define BOOST_TEST_MODULE history_checker
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "pstrain/observe/history_recorder.hpp"
#include "support/history_checker.hpp"
#include "support/idx_files.hpp"

using namespace pstrain::observe;
using pstrain::Role;
using pstrain::testing::checkHistories;
using pstrain::testing::readHistories;
using pstrain::testing::TempDir;

namespace {

constexpr std::uint64_t kRun = 77;
constexpr std::uint64_t kWorker0 = 0xa0;  // worker 0's client incarnation
constexpr std::uint64_t kWorker1 = 0xa1;

HistorySegment life(Role role, std::uint32_t index, std::uint64_t incarnation,
                    std::uint64_t startedAt, std::uint64_t trainSteps, bool sync = false) {
  HistoryHeader header;
  header.role = role;
  header.sync = sync;
  header.index = index;
  header.incarnation = incarnation;
  header.runId = kRun;
  header.trainSteps = trainSteps;
  header.startedAt = startedAt;
  return {header, {}};
}

HistoryRecord serving(std::uint64_t generation, int index, int psCount, std::uint64_t step) {
  return {HistoryKind::kServing, 0, std::uint32_t(index), generation, step, 0, 0,
          std::uint64_t(psCount)};
}

HistoryRecord installed(std::uint64_t generation, int index, int psCount, std::uint64_t step) {
  return {HistoryKind::kCutInstalled, 0, std::uint32_t(index), generation, step, 0, 0,
          std::uint64_t(psCount)};
}

HistoryRecord applied(std::uint32_t worker, std::uint64_t incarnation, std::uint64_t push,
                      std::uint64_t generation, std::uint64_t step, bool closed = true,
                      std::uint64_t staleness = 0) {
  return {HistoryKind::kPushApplied, historyFlag(closed), worker, generation, step, incarnation,
          push, staleness};
}

HistoryRecord checkpoint(std::uint64_t generation, std::uint64_t step) {
  return {HistoryKind::kCheckpointWritten, 0, 0, generation, step, 0, 0, 1};
}

HistoryRecord restored(std::uint64_t step) {
  return {HistoryKind::kRestored, 0, 0, 0, step, 0, 0, 1};
}

HistoryRecord answered(int ps, std::uint64_t generation, std::uint64_t push, std::uint64_t step) {
  return {HistoryKind::kAnswered, kHistoryYes, std::uint32_t(ps), generation, step, 0, push};
}

// An asynchronous run of 6 steps: ps 0 alone takes steps 1 and 2 from worker 0's pushes, is
// re-cut with a new ps 1 into two (generation 1) at step 2, is killed at step 4 (the record of
// step 3 lost with it, never answered) and comes back from its checkpoint; worker 1 pushes the
// last steps.
std::vector<HistorySegment> cleanRun() {
  auto ps0 = life(Role::kPs, 0, 0x10, 100, 6);
  ps0.records = {serving(0, 0, 1, 0),      applied(0, kWorker0, 1, 0, 1),
                 applied(0, kWorker0, 2, 0, 2), checkpoint(0, 2),
                 installed(1, 0, 2, 2),    checkpoint(1, 2),
                 applied(0, kWorker0, 4, 1, 4), checkpoint(1, 4)};
  auto ps1 = life(Role::kPs, 1, 0x11, 150, 6);
  ps1.records = {serving(0, 1, 2, 0),           installed(1, 1, 2, 2),
                 applied(0, kWorker0, 4, 1, 4),  // in the file before the step before it
                 applied(0, kWorker0, 3, 1, 3), applied(1, kWorker1, 1, 1, 5),
                 applied(1, kWorker1, 2, 1, 6)};
  auto ps0Again = life(Role::kPs, 0, 0x12, 300, 6);
  ps0Again.records = {restored(4), serving(1, 0, 2, 4), applied(1, kWorker1, 1, 1, 5),
                      applied(1, kWorker1, 2, 1, 6)};
  auto worker0 = life(Role::kWorker, 0, kWorker0, 120, 6);
  worker0.records = {answered(0, 0, 1, 1), answered(0, 0, 2, 2), answered(1, 1, 3, 3),
                     answered(0, 1, 4, 4), answered(1, 1, 4, 4)};
  auto worker1 = life(Role::kWorker, 1, kWorker1, 310, 6);
  worker1.records = {answered(0, 1, 1, 5), answered(1, 1, 1, 5), answered(0, 1, 2, 6),
                     answered(1, 1, 2, 6)};
  return {ps0, ps1, ps0Again, worker0, worker1};
}

// A sync run of 2 steps with two workers: each step averages one push of each.
std::vector<HistorySegment> cleanSyncRun() {
  auto ps = life(Role::kPs, 0, 0x10, 100, 2, true);
  ps.records = {serving(0, 0, 1, 0), applied(0, kWorker0, 1, 0, 1, false),
                applied(1, kWorker1, 1, 0, 1, true), applied(1, kWorker1, 2, 0, 2, false),
                applied(0, kWorker0, 2, 0, 2, true)};
  return {ps};
}

// The one violation `segments` have, which names `invariant`.
void expectOnly(const std::vector<HistorySegment>& segments, const std::string& invariant) {
  const auto violations = checkHistories(segments);
  BOOST_TEST_INFO("violations: " << violations.size());
  for (const auto& violation : violations) BOOST_TEST_MESSAGE(violation);
  BOOST_REQUIRE(violations.size() >= 1u);
  for (const auto& violation : violations) {
    BOOST_TEST(violation.rfind(invariant + ": ", 0) == 0, violation);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_clean_run_passes_through_a_recut_and_a_restart) {
  const auto violations = checkHistories(cleanRun());
  for (const auto& violation : violations) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(violations.empty());
  BOOST_TEST(checkHistories(cleanSyncRun()).empty());
}

BOOST_AUTO_TEST_CASE(a_skipped_step_breaks_the_step_sequence) {
  auto run = cleanRun();
  run[1].records[3].globalStep = 5;  // ps 1 goes from step 2 to 4, then takes step 5 twice
  expectOnly(run, "step-sequence");
  run = cleanRun();
  for (auto& record : run[2].records) {  // ps 0 comes back and jumps a step
    if (record.kind == HistoryKind::kPushApplied) ++record.globalStep;
  }
  run[2].records.pop_back();
  run[2].records.push_back(applied(1, kWorker1, 3, 1, 6));
  const auto violations = checkHistories(run);
  BOOST_REQUIRE(!violations.empty());
  BOOST_TEST(violations.front().rfind("step-sequence: ps 0", 0) == 0, violations.front());
}

BOOST_AUTO_TEST_CASE(a_push_applied_twice_is_flagged) {
  auto run = cleanRun();
  // ps 1 applies worker 1's first push again as step 6.
  run[1].records.back() = applied(1, kWorker1, 1, 1, 6);
  run[4].records.pop_back();  // so that no answer is left unrecorded
  const auto violations = checkHistories(run);
  BOOST_TEST(violations.size() == 1u);
  BOOST_TEST(violations.front().rfind("push-once: ps 1", 0) == 0, violations.front());
}

BOOST_AUTO_TEST_CASE(a_run_that_ends_short_of_train_steps_is_flagged) {
  auto run = cleanRun();
  run[2].records.pop_back();  // ps 0, back, ends at step 5 of 6
  run[4].records.erase(run[4].records.begin() + 2);
  expectOnly(run, "final-step");
  run = cleanRun();
  run[2].records.push_back(applied(1, kWorker1, 3, 1, 7));  // a step beyond the run
  expectOnly(run, "final-step");
}

BOOST_AUTO_TEST_CASE(a_stale_push_in_a_sync_step_is_flagged) {
  auto run = cleanSyncRun();
  run[0].records[3].value = 1;
  expectOnly(run, "sync-staleness");
}

BOOST_AUTO_TEST_CASE(a_sync_step_that_counts_a_worker_twice_is_flagged) {
  auto run = cleanSyncRun();
  run[0].records[2].peer = 0;  // step 1: worker 0 twice
  expectOnly(run, "sync-worker-once");
}

// A sync ps killed just after its step 2 was taken: the push that waited with the closer has
// recorded itself, the closer has not (and the checkpointer wrote step 2 meanwhile). Back from
// that checkpoint, it takes step 3. Only a life cut short may end on a step without its closer.
BOOST_AUTO_TEST_CASE(a_sync_step_without_its_closer_is_flagged_unless_a_kill_ended_it) {
  auto first = life(Role::kPs, 0, 0x10, 100, 3, true);
  first.records = {serving(0, 0, 1, 0),
                   applied(0, kWorker0, 1, 0, 1, false),
                   applied(1, kWorker1, 1, 0, 1, true),
                   applied(1, kWorker1, 2, 0, 2, false),
                   checkpoint(0, 2)};
  auto again = life(Role::kPs, 0, 0x11, 200, 3, true);
  again.records = {restored(2), serving(0, 0, 1, 2), applied(0, kWorker0, 3, 0, 3, false),
                   applied(1, kWorker1, 3, 0, 3, true)};
  const auto violations = checkHistories({first, again});
  for (const auto& violation : violations) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(violations.empty());
  // The same step without its closer in the life that ends the run.
  again.records.back().flags = historyFlag(false);
  expectOnly({first, again}, "step-sequence");
}

BOOST_AUTO_TEST_CASE(a_restore_older_than_the_last_checkpoint_or_beyond_the_run_is_flagged) {
  auto run = cleanRun();
  // ps 0 comes back at step 3 although its last checkpoint was of step 4.
  run[2].records = {restored(3), serving(1, 0, 2, 3), applied(1, kWorker1, 7, 1, 4),
                    applied(1, kWorker1, 1, 1, 5), applied(1, kWorker1, 2, 1, 6)};
  expectOnly(run, "restore");
  run = cleanRun();
  // ps 0 comes back at the last step, 6, which it never reached (nor step 5: at most a push of
  // its one worker after step 4 may have gone unrecorded).
  run[2].records = {restored(6), serving(1, 0, 2, 6)};
  run[4].records = {answered(1, 1, 1, 5), answered(1, 1, 2, 6)};
  expectOnly(run, "restore");
}

BOOST_AUTO_TEST_CASE(an_applied_answer_the_ps_did_not_record_is_flagged) {
  auto run = cleanRun();
  run[3].records.push_back(answered(1, 1, 9, 6));
  expectOnly(run, "answered-applied");
}

BOOST_AUTO_TEST_CASE(runs_are_told_apart_by_their_id) {
  auto run = cleanRun();
  auto other = cleanSyncRun();
  for (auto& segment : other) segment.header.runId = kRun + 1;
  run.insert(run.end(), other.begin(), other.end());
  BOOST_TEST(checkHistories(run).empty());
}

BOOST_AUTO_TEST_CASE(a_recorded_file_reads_back_segment_by_segment_and_cut_short) {
  TempDir dir;
  const auto path = dir.file(kHistoryFile);
  const auto run = cleanRun();
  for (const auto& index : {0, 2}) {  // ps 0's two lives append to one file
    HistoryRecorder recorder(path, run[size_t(index)].header);
    for (const auto& record : run[size_t(index)].records) recorder.record(record);
  }
  auto read = readHistory(path);
  BOOST_REQUIRE(read.size() == 2u);
  BOOST_TEST(read[1].header.incarnation == 0x12u);
  BOOST_TEST(read[0].records.size() == run[0].records.size());
  BOOST_TEST(read[1].records[1].generation == 1u);
  BOOST_TEST((read[1].records[1].kind == HistoryKind::kServing));
  BOOST_TEST(read[1].records[1].value == 2u);

  // Cut short mid-record: read to the last whole one.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  read = readHistory(path);
  BOOST_TEST(read[1].records.size() == run[2].records.size() - 1);
  BOOST_TEST(readHistories({dir.path()}).size() == 2u);
}
