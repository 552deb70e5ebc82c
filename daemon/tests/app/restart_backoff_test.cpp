#define BOOST_TEST_MODULE restart_backoff
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>

#include "pstrain/app/restart_backoff.hpp"
#include "pstrain/common/error.hpp"

using pstrain::app::RestartBackoff;

namespace {

constexpr int kKilled = 137;  // 128 + SIGKILL

// What a run did before it ended: at its work (training) for how long, and with steps or not.
enum class Did { kNoStep, kStepsBriefly, kStepsSteadily, kWaitedSteadily };

// The delay before the next start, in milliseconds, or -1 when the child is given up.
long next(RestartBackoff& backoff, int status, Did did) {
  RestartBackoff::Run run;
  run.status = status;
  run.madeSteps = did == Did::kStepsBriefly || did == Did::kStepsSteadily;
  const bool steady = did == Did::kStepsSteadily || did == Did::kWaitedSteadily;
  run.atWork = steady ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            RestartBackoff::kSteadyRun)
                      : std::chrono::milliseconds(300);
  auto delay = backoff.exited(run);
  return delay ? long(delay->count()) : -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(restarts_a_child_that_makes_steps_after_the_first_delay_every_time) {
  RestartBackoff backoff;
  for (int run = 0; run < 1000; ++run) {
    BOOST_REQUIRE_EQUAL(next(backoff, kKilled, run % 2 ? Did::kStepsSteadily : Did::kStepsBriefly),
                        250);
  }
}

BOOST_AUTO_TEST_CASE(doubles_the_delay_for_runs_without_a_step_up_to_the_cap) {
  RestartBackoff backoff;
  for (long expected : {250, 500, 1000, 2000, 4000, 4000, 4000}) {
    BOOST_TEST(next(backoff, kKilled, Did::kNoStep) == expected);
  }
  BOOST_TEST(next(backoff, kKilled, Did::kStepsSteadily) == 250);
  BOOST_TEST(next(backoff, kKilled, Did::kNoStep) == 500);
}

// A worker reports `training` as soon as it connects: a child that connects and dies at once
// made no step, and backs off as one that never started.
BOOST_AUTO_TEST_CASE(says_once_when_runs_without_a_step_reach_the_cap) {
  RestartBackoff backoff;
  int capped = 0;
  for (int run = 1; run <= 20; ++run) {
    next(backoff, kKilled, Did::kNoStep);
    if (backoff.reachedCap()) {
      ++capped;
      BOOST_TEST(run == 5);
      BOOST_TEST(backoff.steplessRuns() == 5);
    }
  }
  BOOST_TEST(capped == 1);
  next(backoff, kKilled, Did::kStepsSteadily);  // restarted after 0.25 s
  BOOST_TEST(!backoff.reachedCap());
  for (long expected : {500, 1000, 2000}) {
    BOOST_TEST(next(backoff, kKilled, Did::kNoStep) == expected);
    BOOST_TEST(!backoff.reachedCap());
  }
  BOOST_TEST(next(backoff, kKilled, Did::kNoStep) == 4000);
  BOOST_TEST(backoff.reachedCap());  // a new loop after a steady run is said again
  BOOST_TEST(backoff.steplessRuns() == 4);
}

// A run that reported its work, training, but left it within kSteadyRun without a step did not
// work: a worker that connects and dies at once. One that made steps did, however briefly.
BOOST_AUTO_TEST_CASE(a_brief_run_doubles_the_delay_without_a_step_and_resets_it_with_steps) {
  RestartBackoff backoff;
  for (long expected : {250, 500, 1000}) {
    BOOST_TEST(next(backoff, kKilled, Did::kNoStep) == expected);
  }
  BOOST_TEST(next(backoff, kKilled, Did::kStepsBriefly) == 250);
  BOOST_TEST(next(backoff, kKilled, Did::kNoStep) == 500);
}

// A worker that waits at its work for a ps that is down makes no step, and is no crash: killed
// after a while, it starts again at once.
BOOST_AUTO_TEST_CASE(a_run_that_stayed_at_its_work_for_a_while_without_steps_resets_the_delay) {
  RestartBackoff backoff;
  for (int run = 0; run < 5; ++run) next(backoff, kKilled, Did::kNoStep);
  BOOST_TEST(next(backoff, kKilled, Did::kWaitedSteadily) == 250);
  BOOST_TEST(next(backoff, pstrain::kExitPeer, Did::kWaitedSteadily) == 250);
  for (int run = 0; run < 1000; ++run) {
    BOOST_REQUIRE_EQUAL(next(backoff, pstrain::kExitPeer, Did::kWaitedSteadily), 250);
  }
}

BOOST_AUTO_TEST_CASE(gives_up_on_the_fifth_exit_in_a_row_without_a_step) {
  RestartBackoff backoff;
  for (long expected : {250, 500, 1000, 2000}) {
    BOOST_TEST(next(backoff, pstrain::kExitIo, Did::kNoStep) == expected);
  }
  BOOST_TEST(next(backoff, pstrain::kExitIo, Did::kNoStep) == -1);
}

BOOST_AUTO_TEST_CASE(a_run_with_steps_forgives_the_failed_starts_before) {
  RestartBackoff backoff;
  for (int run = 0; run < 4; ++run) next(backoff, pstrain::kExitListen, Did::kNoStep);
  BOOST_TEST(next(backoff, pstrain::kExitPeer, Did::kStepsSteadily) == 250);
  for (long expected : {500, 1000, 2000, 4000}) {
    BOOST_TEST(next(backoff, pstrain::kExitListen, Did::kNoStep) == expected);
  }
  BOOST_TEST(next(backoff, pstrain::kExitListen, Did::kNoStep) == -1);
}

// Restarted without limit: a child that exits by itself, but makes steps each time, is never
// given up.
BOOST_AUTO_TEST_CASE(a_child_that_makes_steps_before_each_exit_is_never_given_up) {
  RestartBackoff backoff;
  for (int run = 0; run < 1000; ++run) {
    BOOST_REQUIRE_EQUAL(next(backoff, pstrain::kExitPeer, Did::kStepsBriefly), 250);
  }
}

BOOST_AUTO_TEST_CASE(kills_without_a_step_neither_count_as_failed_starts_nor_forgive_them) {
  RestartBackoff backoff;
  for (int run = 0; run < 4; ++run) next(backoff, pstrain::kExitIo, Did::kNoStep);
  next(backoff, kKilled, Did::kNoStep);
  BOOST_TEST(next(backoff, pstrain::kExitIo, Did::kNoStep) == -1);
}

BOOST_AUTO_TEST_CASE(a_child_the_disk_has_no_room_for_is_started_again_at_the_cap_until_it_has) {
  RestartBackoff backoff;
  for (int run = 0; run < 4; ++run) next(backoff, pstrain::kExitIo, Did::kNoStep);
  for (int run = 0; run < 20; ++run) {
    BOOST_REQUIRE_NE(next(backoff, pstrain::kExitDiskFull, Did::kNoStep), -1);
  }
  BOOST_TEST(next(backoff, pstrain::kExitDiskFull, Did::kNoStep) == 4000);
  BOOST_TEST(next(backoff, pstrain::kExitIo, Did::kNoStep) == -1);  // nor forgiven
}

BOOST_AUTO_TEST_CASE(gives_up_at_once_on_a_configuration_or_data_error) {
  for (int status : {pstrain::kExitConfig, pstrain::kExitData}) {
    RestartBackoff fresh;
    BOOST_TEST(next(fresh, status, Did::kNoStep) == -1);
    RestartBackoff working;
    BOOST_TEST(next(working, status, Did::kStepsSteadily) == -1);
  }
}
