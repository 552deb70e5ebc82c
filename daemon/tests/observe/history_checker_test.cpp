#define BOOST_TEST_MODULE history_checker
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "pstrain/common/error.hpp"
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
constexpr std::uint64_t kParameters = 10;  // of the runs' model
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
  header.parameterCount = kParameters;
  return {header, {}};
}

// `record` of the values of [offset, offset + count) with `checksum`.
HistoryRecord ofSlice(HistoryRecord record, std::uint64_t offset, std::uint64_t count,
                      std::uint64_t checksum) {
  record.offset = offset;
  record.count = count;
  record.checksum = checksum;
  return record;
}

HistoryRecord serving(std::uint64_t generation, int index, int psCount, std::uint64_t step) {
  return {HistoryKind::kServing, 0, std::uint32_t(index), generation, step, 0, 0,
          std::uint64_t(psCount)};
}

// Slice `index` of `psCount`, its values of `checksum`.
HistoryRecord installed(std::uint64_t generation, int index, int psCount, std::uint64_t step,
                        std::uint64_t checksum = 0) {
  const auto offset = kParameters * std::uint64_t(index) / std::uint64_t(psCount);
  const auto end = kParameters * std::uint64_t(index + 1) / std::uint64_t(psCount);
  return ofSlice({HistoryKind::kCutInstalled, 0, std::uint32_t(index), generation, step, 0, 0,
                  std::uint64_t(psCount)},
                 offset, end - offset, checksum);
}

// Frozen for the re-cut to `generation`: [offset, offset + count) of cut `from` at `step`.
HistoryRecord frozen(std::uint64_t generation, std::uint64_t from, std::uint64_t step,
                     std::uint64_t offset, std::uint64_t count, std::uint64_t checksum) {
  return ofSlice({HistoryKind::kCutFrozen, 0, 0, generation, step, 0, 0, from}, offset, count,
                 checksum);
}

HistoryRecord thawed(std::uint64_t generation, std::uint64_t step, std::uint64_t checksum) {
  return ofSlice({HistoryKind::kCutThawed, 0, 0, generation, step}, 0, kParameters, checksum);
}

// Worker 0's record of its re-cut to `generation` at `step`.
HistoryRecord recut(std::uint64_t generation, std::uint64_t step, std::uint64_t lostState = 0,
                    bool unreached = false) {
  return {HistoryKind::kRecut, historyFlag(unreached), 2, generation, step, 0, 0, lostState};
}

HistoryRecord applied(std::uint32_t worker, std::uint64_t incarnation, std::uint64_t push,
                      std::uint64_t generation, std::uint64_t step, bool closed = true,
                      std::uint64_t staleness = 0) {
  return {HistoryKind::kPushApplied, historyFlag(closed), worker, generation, step, incarnation,
          push, staleness};
}

// Checkpoints are of path hash 1, and of the whole of ps 0's slice of 2 ps.
HistoryRecord checkpoint(std::uint64_t generation, std::uint64_t step,
                         std::uint64_t checksum = 0) {
  return ofSlice({HistoryKind::kCheckpointWritten, 0, 0, generation, step, 0, 0, 1}, 0, 5,
                 checksum);
}

HistoryRecord restored(std::uint64_t step, std::uint64_t generation = 0,
                       std::uint64_t checksum = 0) {
  return ofSlice({HistoryKind::kRestored, 0, 0, generation, step, 0, 0, 1}, 0, 5, checksum);
}

// A worker's copy of ps 0's slice adopted at `step`.
HistoryRecord recovered(std::uint64_t step, std::uint64_t generation) {
  return ofSlice({HistoryKind::kShardRecovered, 0, 0, generation, step}, 0, 5, 0);
}

// A push ps 0 refused at `step` of `generation`: what a worker sees of a ps back behind it.
HistoryRecord wentBackTo(std::uint64_t generation, std::uint64_t step) {
  return {HistoryKind::kAnswered, 0, 0, generation, step, 0, 99};
}

HistoryRecord answered(int ps, std::uint64_t generation, std::uint64_t push, std::uint64_t step) {
  return {HistoryKind::kAnswered, kHistoryYes, std::uint32_t(ps), generation, step, 0, push};
}

// The values of the clean run's slices: ps 0's whole vector at step 2, its halves after the
// re-cut, ps 1's slice of its configured cut (its initial values, frozen at step 0) and ps 0's
// checkpoint at step 4.
constexpr std::uint64_t kWhole = 0x3000, kHead = 0x1000, kTail = 0x2000, kInitial = 0x777,
                        kAtStep4 = 0x4444;

// An asynchronous run of 6 steps: ps 0 alone takes steps 1 and 2 from worker 0's pushes, is
// re-cut with a new ps 1 into two (generation 1) at step 2 (ps 1's initial slice frozen too,
// and overwritten by ps 0's newer one), is killed at step 4 (the record of step 3 lost with it,
// never answered) and comes back from its checkpoint; worker 1 pushes the last steps.
std::vector<HistorySegment> cleanRun() {
  auto ps0 = life(Role::kPs, 0, 0x10, 100, 6);
  ps0.records = {serving(0, 0, 1, 0),
                 applied(0, kWorker0, 1, 0, 1),
                 applied(0, kWorker0, 2, 0, 2),
                 checkpoint(0, 2),
                 frozen(1, 0, 2, 0, kParameters, kWhole),
                 installed(1, 0, 2, 2, kHead),
                 checkpoint(1, 2, kHead),
                 applied(0, kWorker0, 4, 1, 4),
                 checkpoint(1, 4, kAtStep4)};
  auto ps1 = life(Role::kPs, 1, 0x11, 150, 6);
  ps1.records = {serving(0, 1, 2, 0), frozen(1, 0, 0, 5, 5, kInitial),
                 installed(1, 1, 2, 2, kTail),
                 applied(0, kWorker0, 4, 1, 4),  // in the file before the step before it
                 applied(0, kWorker0, 3, 1, 3), applied(1, kWorker1, 1, 1, 5),
                 applied(1, kWorker1, 2, 1, 6)};
  auto ps0Again = life(Role::kPs, 0, 0x12, 300, 6);
  ps0Again.records = {restored(4, 1, kAtStep4), serving(1, 0, 2, 4),
                      applied(1, kWorker1, 1, 1, 5), applied(1, kWorker1, 2, 1, 6)};
  auto worker0 = life(Role::kWorker, 0, kWorker0, 120, 6);
  worker0.records = {answered(0, 0, 1, 1), answered(0, 0, 2, 2), recut(1, 2),
                     answered(1, 1, 3, 3), answered(0, 1, 4, 4), answered(1, 1, 4, 4)};
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
  run[1].records[4].globalStep = 5;  // ps 1 goes from step 2 to 4, then takes step 5 twice
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

// A ps added to the settings and taken out again before worker 0 re-cut served its configured
// cut of generation 0 and 2 ps, and took no step: the run's last cut is ps 0's, of 1 ps.
BOOST_AUTO_TEST_CASE(a_ps_that_never_joined_the_cut_is_not_held_to_the_final_step) {
  auto run = cleanSyncRun();
  auto ps1 = life(Role::kPs, 1, 0x11, 150, 2, true);
  ps1.records = {serving(0, 1, 2, 0)};
  run.push_back(ps1);
  const auto violations = checkHistories(run);
  for (const auto& violation : violations) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(violations.empty());
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
  // ps 0 comes back at step 3 although its last checkpoint was of step 4, and worker 0, which
  // knew it at step 4, is answered at step 3.
  run[2].records = {restored(3), serving(1, 0, 2, 3), applied(1, kWorker1, 7, 1, 4),
                    applied(1, kWorker1, 1, 1, 5), applied(1, kWorker1, 2, 1, 6)};
  run[3].records.push_back(wentBackTo(1, 3));
  expectOnly(run, "restore");
  // No worker that knew it further came back to it (all gone meanwhile): the restore records the
  // loss, which nothing could undo.
  run[3].records.pop_back();
  const auto unseen = checkHistories(run);
  for (const auto& violation : unseen) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(unseen.empty());
  run[3].records.push_back(wentBackTo(1, 3));
  // The same, with a worker's copy of step 4 adopted before any push: nothing older goes on.
  run[2].records = {restored(3), serving(1, 0, 2, 3), recovered(4, 1),
                    applied(1, kWorker1, 1, 1, 5), applied(1, kWorker1, 2, 1, 6)};
  const auto violations = checkHistories(run);
  for (const auto& violation : violations) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(violations.empty());
  // Worker 1, which knew ps 0 no further, pushed first (step 4 on the older parameters); then a
  // copy of step 5 came and undid it.
  run[2].records = {restored(3), serving(1, 0, 2, 3), applied(1, kWorker1, 1, 1, 4),
                    recovered(5, 1), applied(1, kWorker1, 2, 1, 6)};
  const auto undone = checkHistories(run);
  for (const auto& violation : undone) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(undone.empty());
  // The copy's record written after that of a push on it (their threads' order): the push's step
  // says which run of steps it went into.
  run[2].records = {restored(3), serving(1, 0, 2, 3), applied(1, kWorker1, 1, 1, 5),
                    recovered(4, 1), applied(1, kWorker1, 2, 1, 6)};
  const auto reordered = checkHistories(run);
  for (const auto& violation : reordered) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(reordered.empty());
  // The steps a copy undid are held to their sequence all the same: step 4 skipped, step 5
  // taken twice.
  run[2].records = {restored(3), serving(1, 0, 2, 3), applied(1, kWorker1, 1, 1, 5),
                    applied(1, kWorker1, 2, 1, 5), recovered(6, 1)};
  expectOnly(run, "step-sequence");
  // After the run's end: ps 0, its final checkpoint written at step 6, comes back at step 4 (a
  // stale checkpoint) and applies nothing: nothing is lost. Were it to train on from there, the
  // steps after 4 would be.
  run = cleanRun();
  run[2].records.push_back(checkpoint(1, 6));
  auto late = life(Role::kPs, 0, 0x13, 400, 6);
  late.records = {restored(4, 1, kAtStep4), serving(1, 0, 2, 4)};
  run.push_back(late);
  const auto afterTheEnd = checkHistories(run);
  for (const auto& violation : afterTheEnd) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(afterTheEnd.empty());
  run.back().records.push_back(applied(1, kWorker1, 3, 1, 5));
  run.back().records.push_back(applied(1, kWorker1, 4, 1, 6));
  run[4].records.push_back(wentBackTo(1, 5));
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

BOOST_AUTO_TEST_CASE(a_recut_that_installs_other_values_than_it_froze_is_flagged) {
  auto run = cleanRun();
  run[1].records[2].checksum = 0;  // ps 1's slice installed as something else
  expectOnly(run, "recut-values");
  // Where worker 0 recorded lost state (a ps it did not reach), its copy filled the gap: the
  // frozen slices do not say what was installed.
  run[3].records[2] = recut(1, 2, 5, true);
  BOOST_TEST(checkHistories(run).empty());
  // Nor where worker 0 recorded nothing.
  run[3].records.erase(run[3].records.begin() + 2);
  BOOST_TEST(checkHistories(run).empty());
}

BOOST_AUTO_TEST_CASE(a_recut_resumed_after_a_ps_restarted_is_held_to_the_later_lifes_freeze) {
  // ps 0 froze at step 3 for the re-cut and died before any install; started again from its
  // checkpoint of step 2, it froze again, and the resumed re-cut installed that. What the first
  // life froze died with it (the step it took after its checkpoint is the restore's to record).
  constexpr std::uint64_t kHeadAgain = 0x1234;
  auto run = cleanRun();
  auto first = life(Role::kPs, 0, 0x15, 90, 6);
  first.records = {serving(0, 0, 1, 0),
                   applied(0, kWorker0, 1, 0, 1),
                   applied(0, kWorker0, 2, 0, 2),
                   checkpoint(0, 2),
                   applied(0, kWorker0, 9, 0, 3),
                   frozen(1, 0, 3, 0, kParameters, kWhole)};
  run[0].records = {restored(2),
                    serving(0, 0, 1, 2),
                    frozen(1, 0, 2, 0, kParameters, kHeadAgain + kTail),
                    installed(1, 0, 2, 2, kHeadAgain),
                    checkpoint(1, 2, kHeadAgain),
                    applied(0, kWorker0, 4, 1, 4),
                    checkpoint(1, 4, kAtStep4)};
  run.push_back(first);
  const auto violations = checkHistories(run);
  for (const auto& violation : violations) BOOST_TEST_MESSAGE(violation);
  BOOST_TEST(violations.empty());
  // Installed as something else than the later freeze gives: flagged.
  run[0].records[3].checksum = kHead;
  expectOnly(run, "recut-values");
}

BOOST_AUTO_TEST_CASE(a_thaw_that_gives_back_other_values_is_flagged) {
  auto run = cleanRun();
  // Before the re-cut, one that installed nothing: ps 0 frozen for it, then thawed.
  auto& records = run[0].records;
  records.insert(records.begin() + 3, {frozen(1, 0, 2, 0, kParameters, kWhole),
                                       thawed(0, 2, kWhole)});
  BOOST_TEST(checkHistories(run).empty());
  records[4].checksum = kHead;
  expectOnly(run, "recut-values");
}

BOOST_AUTO_TEST_CASE(a_recut_installed_below_a_frozen_step_is_flagged_unless_state_was_lost) {
  auto run = cleanRun();
  // ps 1's slice was at step 3 (and, newer, hides part of ps 0's: the values are not compared).
  run[1].records[1] = frozen(1, 0, 3, 5, 5, kInitial);
  expectOnly(run, "recut-step");
  run[3].records[2] = recut(1, 2, 5, true);
  BOOST_TEST(checkHistories(run).empty());
}

BOOST_AUTO_TEST_CASE(lost_state_is_flagged_unless_a_ps_was_unreached_or_came_back_behind) {
  auto run = cleanRun();
  run[3].records[2] = recut(1, 2, 5);  // every ps reached, none restarted
  expectOnly(run, "lost-state");
  run[3].records[2] = recut(1, 2, 5, true);
  BOOST_TEST(checkHistories(run).empty());
  // ps 1 had lived before and came back without its checkpoint, its slice behind the step.
  run[3].records[2] = recut(1, 2, 5);
  auto ps1Before = life(Role::kPs, 1, 0x13, 90, 6);
  ps1Before.records = {serving(0, 1, 2, 0)};
  run.push_back(ps1Before);
  BOOST_TEST(checkHistories(run).empty());
}

BOOST_AUTO_TEST_CASE(a_restore_of_other_values_than_the_checkpoint_written_is_flagged) {
  auto run = cleanRun();
  run[2].records[0].checksum = kHead;  // ps 0 back at step 4 with other values
  expectOnly(run, "restore-values");
  run[2].records[0].value = 2;  // from another path: no checkpoint recorded there to compare
  BOOST_TEST(checkHistories(run).empty());
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
  BOOST_TEST(read[1].header.parameterCount == kParameters);
  BOOST_TEST(read[1].records[0].checksum == kAtStep4);
  BOOST_TEST(read[1].records[0].count == 5u);

  // Cut short mid-record: read to the last whole one.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  read = readHistory(path);
  BOOST_TEST(read[1].records.size() == run[2].records.size() - 1);
  BOOST_TEST(readHistories({dir.path()}).size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_history_the_disk_has_no_room_for_fails_as_a_full_disk) {
  // Exit code 7, which pstrain local starts again however often (RestartBackoff).
  BOOST_CHECK_THROW(HistoryRecorder("/dev/full", cleanRun()[0].header), pstrain::DiskFullError);
}
