#define BOOST_TEST_MODULE restart_backoff
#include <boost/test/unit_test.hpp>

#include <optional>

#include "pstrain/app/restart_backoff.hpp"
#include "pstrain/common/error.hpp"

using pstrain::app::RestartBackoff;

namespace {

constexpr int kKilled = 137;  // 128 + SIGKILL

// The delay before the next start, in milliseconds, or -1 when the child is given up.
long next(RestartBackoff& backoff, int status, bool reachedWork) {
  if (reachedWork) backoff.reachedWork();
  auto delay = backoff.exited(status);
  return delay ? long(delay->count()) : -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(restarts_a_child_that_reached_its_work_after_the_first_delay_every_time) {
  RestartBackoff backoff;
  for (int run = 0; run < 1000; ++run) {
    BOOST_REQUIRE_EQUAL(next(backoff, kKilled, true), 250);
  }
}

BOOST_AUTO_TEST_CASE(doubles_the_delay_for_runs_killed_before_their_work_up_to_the_cap) {
  RestartBackoff backoff;
  for (long expected : {250, 500, 1000, 2000, 4000, 8000, 8000, 8000}) {
    BOOST_TEST(next(backoff, kKilled, false) == expected);
  }
  BOOST_TEST(next(backoff, kKilled, true) == 250);
  BOOST_TEST(next(backoff, kKilled, false) == 500);
}

BOOST_AUTO_TEST_CASE(gives_up_on_the_fifth_exit_in_a_row_before_the_work) {
  RestartBackoff backoff;
  for (long expected : {250, 500, 1000, 2000}) {
    BOOST_TEST(next(backoff, pstrain::kExitIo, false) == expected);
  }
  BOOST_TEST(next(backoff, pstrain::kExitIo, false) == -1);
}

BOOST_AUTO_TEST_CASE(a_run_that_reached_its_work_forgives_the_failed_starts_before) {
  RestartBackoff backoff;
  for (int run = 0; run < 4; ++run) next(backoff, pstrain::kExitListen, false);
  BOOST_TEST(next(backoff, pstrain::kExitPeer, true) == 250);
  for (long expected : {500, 1000, 2000, 4000}) {
    BOOST_TEST(next(backoff, pstrain::kExitListen, false) == expected);
  }
  BOOST_TEST(next(backoff, pstrain::kExitListen, false) == -1);
}

BOOST_AUTO_TEST_CASE(kills_before_the_work_neither_count_as_failed_starts_nor_forgive_them) {
  RestartBackoff backoff;
  for (int run = 0; run < 4; ++run) next(backoff, pstrain::kExitIo, false);
  next(backoff, kKilled, false);
  BOOST_TEST(next(backoff, pstrain::kExitIo, false) == -1);
}

BOOST_AUTO_TEST_CASE(gives_up_at_once_on_a_configuration_or_data_error) {
  for (int status : {pstrain::kExitConfig, pstrain::kExitData}) {
    RestartBackoff fresh;
    BOOST_TEST(next(fresh, status, false) == -1);
    RestartBackoff working;
    BOOST_TEST(next(working, status, true) == -1);
  }
}
