#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pstrain/common/error.hpp"

namespace pstrain::failpoint {

// Named failpoints, after libfiu, TiKV's fail-rs and etcd's gofail: places in the code where a
// test or a fault drill makes a process fail on purpose, at that point and no other, instead of
// hoping a timed fault lands there. Off, a site costs one relaxed atomic load. They are turned
// on by PSTRAIN_FAILPOINTS, read once at start ("name=setting;name=setting"), or by set().
//
// A setting is `[skip+][count*]action[(argument)]`: the first `skip` hits pass; then, with a
// count, only that many hits act, then the failpoint is off ("2+1*kill": the third hit kills).
// The actions any site carries out:
//   off        nothing
//   kill       the process sends itself SIGKILL
//   pause(ms)  the thread that hit it sleeps that long
//   error      the site throws FailpointError, an IoError
// and planted faults, each carried out by the sites named for it (they make a run wrong on
// purpose, so that tests show the run's history checker catches it):
//   again      ps.after-apply: the push is applied once more
//   skip       shard.step: an asynchronous global step number is skipped;
//              shard.sync-barrier: a sync worker whose push waits at the barrier is let in again
//   zero       recut.install: the slice installed is zeros, parameters and optimizer moments
//   drop(n)    recut.install: the last n parameters of the slice lose their values and moments

// The environment variable that sets failpoints at start.
constexpr const char* kVariable = "PSTRAIN_FAILPOINTS";

enum class Action : std::uint8_t { kOff, kKill, kPause, kError, kAgain, kSkip, kZero, kDrop };

// What a site that was hit must do itself: a planted fault (the generic actions are over by the
// time the site sees this), with its argument.
struct Hit {
  Action action = Action::kOff;
  std::uint64_t argument = 0;
  explicit operator bool() const { return action != Action::kOff; }
};

// What the action `error` throws.
class FailpointError : public IoError {
 public:
  using IoError::IoError;
};

// The sites there are, each with its planted faults (set() refuses others, and unknown names).
struct Site {
  const char* name;
  std::vector<Action> planted;
  const char* where;
};
const std::vector<Site>& sites();

namespace detail {
extern std::atomic<bool> anyOn;
Hit hit(const char* name);
}  // namespace detail

// The site `name`: carries out its failpoint's action if it is on.
inline Hit check(const char* name) {
  if (!detail::anyOn.load(std::memory_order_relaxed)) return {};
  return detail::hit(name);
}

// Turns failpoint `name` on with `setting` (off: "off"); throws ConfigError naming what is wrong.
void set(const std::string& name, const std::string& setting);
// Sets each "name=setting" of `spec`, separated by ';'. Throws ConfigError, setting none.
void configure(const std::string& spec);
// configure() of PSTRAIN_FAILPOINTS, if set: once, at start.
void configureFromEnvironment();
// Every failpoint off.
void clear();
// How many times failpoint `name` has acted since it was last set.
std::uint64_t triggered(const std::string& name);

// A failpoint on for a scope of a test.
class Scoped {
 public:
  Scoped(std::string name, const std::string& setting) : name_(std::move(name)) {
    set(name_, setting);
  }
  ~Scoped() { set(name_, "off"); }
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;

 private:
  std::string name_;
};

}  // namespace pstrain::failpoint

#define PSTRAIN_FAILPOINT(name) ::pstrain::failpoint::check(name)
