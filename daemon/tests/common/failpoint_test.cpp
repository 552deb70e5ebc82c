#define BOOST_TEST_MODULE failpoint
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "pstrain/common/failpoint.hpp"
#include "pstrain/config/config.hpp"

using namespace pstrain;
namespace fp = pstrain::failpoint;

// Every case starts with every failpoint off. (Outside the anonymous namespace: the suite's
// cases derive from it.)
struct AllOff {
  AllOff() { fp::clear(); }
  ~AllOff() { fp::clear(); }
};

namespace {

// The ConfigError message of `set`, or "" where it was accepted.
std::string refusal(const std::string& name, const std::string& setting) {
  try {
    fp::set(name, setting);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(failpoints, AllOff)

BOOST_AUTO_TEST_CASE(a_site_is_nothing_until_its_failpoint_is_set) {
  BOOST_TEST(!PSTRAIN_FAILPOINT("recut.install"));
  fp::set("recut.install", "drop(7)");
  const auto hit = PSTRAIN_FAILPOINT("recut.install");
  BOOST_TEST((hit.action == fp::Action::kDrop));
  BOOST_TEST(hit.argument == 7u);
  BOOST_TEST(!PSTRAIN_FAILPOINT("shard.step"));  // the others stay off
  BOOST_TEST(fp::triggered("recut.install") == 1u);
  fp::set("recut.install", "off");
  BOOST_TEST(!PSTRAIN_FAILPOINT("recut.install"));
  BOOST_TEST(fp::triggered("recut.install") == 0u);
}

BOOST_AUTO_TEST_CASE(a_count_limits_the_hits_that_act) {
  fp::set("shard.step", "2*skip");
  BOOST_TEST(bool(PSTRAIN_FAILPOINT("shard.step")));
  BOOST_TEST(bool(PSTRAIN_FAILPOINT("shard.step")));
  BOOST_TEST(!PSTRAIN_FAILPOINT("shard.step"));
  BOOST_TEST(fp::triggered("shard.step") == 2u);
}

BOOST_AUTO_TEST_CASE(pause_sleeps_and_error_throws_an_io_error) {
  fp::set("checkpoint.before-rename", "pause(60)");
  const auto start = std::chrono::steady_clock::now();
  BOOST_TEST(!PSTRAIN_FAILPOINT("checkpoint.before-rename"));  // nothing left for the site
  BOOST_TEST((std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(60)));
  fp::set("checkpoint.before-rename", "error");
  BOOST_CHECK_THROW(PSTRAIN_FAILPOINT("checkpoint.before-rename"), IoError);
}

BOOST_AUTO_TEST_CASE(kill_ends_the_process_with_sigkill) {
  const pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    fp::set("recut.installed", "kill");
    PSTRAIN_FAILPOINT("recut.installed");
    ::_exit(0);  // not reached
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(child, &status, 0) == child);
  BOOST_TEST(WIFSIGNALED(status));
  BOOST_TEST(WTERMSIG(status) == SIGKILL);
}

BOOST_AUTO_TEST_CASE(a_spec_sets_several_and_a_bad_one_sets_none) {
  fp::configure(" recut.install = zero ; ps.after-apply=3*again;");
  BOOST_TEST((PSTRAIN_FAILPOINT("recut.install").action == fp::Action::kZero));
  BOOST_TEST((PSTRAIN_FAILPOINT("ps.after-apply").action == fp::Action::kAgain));
  fp::clear();
  BOOST_CHECK_THROW(fp::configure("shard.step=skip;recut.frozen=sometimes"), ConfigError);
  BOOST_TEST(!PSTRAIN_FAILPOINT("shard.step"));
  BOOST_CHECK_THROW(fp::configure("shard.step"), ConfigError);
}

BOOST_AUTO_TEST_CASE(wrong_settings_are_refused_naming_what_is_wrong) {
  BOOST_TEST(mentions(refusal("recut.instal", "kill"), "unknown failpoint 'recut.instal'"));
  BOOST_TEST(mentions(refusal("recut.install", "explode"), "unknown action 'explode'"));
  // A planted fault only where a site carries it out.
  BOOST_TEST(mentions(refusal("checkpoint.before-rename", "zero"), "does not plant 'zero'"));
  BOOST_TEST(mentions(refusal("recut.install", "pause"), "pause's argument"));
  BOOST_TEST(mentions(refusal("recut.install", "kill(3)"), "takes no argument"));
  BOOST_TEST(mentions(refusal("recut.install", "0*kill"), "a count of 0"));
  BOOST_TEST(mentions(refusal("recut.install", "drop(x)"), "whole number"));
  BOOST_TEST(refusal("recut.install", "1*pause(5)").empty());
}

BOOST_AUTO_TEST_CASE(the_environment_turns_them_on_and_is_no_setting_of_the_run) {
  ::setenv("PSTRAIN_FAILPOINTS", "shard.sync-barrier=skip", 1);
  fp::configureFromEnvironment();
  BOOST_TEST((PSTRAIN_FAILPOINT("shard.sync-barrier").action == fp::Action::kSkip));
  // The configuration, which refuses PSTRAIN_* variables it does not know, leaves it be.
  BOOST_CHECK_NO_THROW(config::load({{}, {{"PSTRAIN_FAILPOINTS", "shard.step=skip"}}}));
  ::setenv("PSTRAIN_FAILPOINTS", "nowhere=kill", 1);
  try {
    fp::configureFromEnvironment();
    BOOST_FAIL("a failpoint of no site was taken");
  } catch (const ConfigError& e) {
    BOOST_TEST(mentions(e.what(), "invalid PSTRAIN_FAILPOINTS: unknown failpoint 'nowhere'"));
  }
  ::unsetenv("PSTRAIN_FAILPOINTS");
}

BOOST_AUTO_TEST_SUITE_END()
