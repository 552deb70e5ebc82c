#include "support/chaos_schedule.hpp"

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "pstrain/common/log.hpp"
#include "support/wait.hpp"

namespace pstrain::testing {
namespace {

using std::chrono::milliseconds;
using Kind = ChaosSchedule::Kind;

// The faults a schedule draws from, each as likely; the end of a window is not drawn but
// follows its start.
constexpr Kind kDrawn[] = {Kind::kCrashPs,      Kind::kStopPs,     Kind::kLosePs,
                           Kind::kPausePs,      Kind::kPauseWorker, Kind::kResetPs,
                           Kind::kDropPs,       Kind::kLatencyOn,   Kind::kSliceOn,
                           Kind::kRecut,        Kind::kWorkerLeaves, Kind::kWorkerJoins};
constexpr int kMaxPs = 3;
constexpr int kMaxWorkers = 6;  // workers ever started in one run, those who left included

// The schedule's random numbers: the same seed draws the same ones (with the same standard
// library, whose distributions are its own).
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : random_(seed) {}
  // Uniform in [low, high].
  std::int64_t operator()(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(random_);
  }
  milliseconds ms(std::int64_t low, std::int64_t high) { return milliseconds((*this)(low, high)); }
  template <typename T>
  T among(const std::vector<T>& choices) {
    return choices.at(size_t((*this)(0, std::int64_t(choices.size()) - 1)));
  }

 private:
  std::mt19937_64 random_;
};

// 0 to `count` - 1.
std::vector<int> range(int count) {
  std::vector<int> all(size_t(count), 0);
  for (int i = 0; i < count; ++i) all[size_t(i)] = i;
  return all;
}

// A ps's frame hook that takes at least 1 ms over each push: a worker makes at most 1,000
// steps/s on any machine, so that periodic checkpoints fall between the faults and ps 0 passes
// each action's step by a few steps only before it is applied.
void paced(const net::Incoming& frame) {
  if (frame.type == net::MessageType::kPush) std::this_thread::sleep_for(milliseconds(1));
}

// The step that ends a window `length` steps long from `step`: the last step at the latest,
// which ps 0 reaches whatever else the run meets.
std::uint64_t windowEnd(std::uint64_t step, std::int64_t length, std::uint64_t trainSteps) {
  return std::min(step + std::uint64_t(length), trainSteps);
}

}  // namespace

ChaosSchedule::ChaosSchedule(std::uint64_t seed) : seed_(seed) {
  Draw draw(seed);
  ps_ = int(draw(1, kMaxPs));
  workers_ = int(draw(2, 4));
  sync_ = draw(0, 1) == 1;
  std::vector<std::uint64_t> steps;
  for (auto count = draw(4, 8); count > 0; --count) {
    steps.push_back(std::uint64_t(draw(kTrainSteps / 10, kTrainSteps * 8 / 10)));
  }
  std::sort(steps.begin(), steps.end());

  // The cluster as the actions so far leave it: the ps in the cut and the workers alive.
  int psCount = ps_;
  std::vector<int> alive = range(workers_);
  int started = workers_;
  for (const auto step : steps) {
    Action action;
    action.step = step;
    for (;;) {
      action.kind = kDrawn[draw(0, std::int64_t(std::size(kDrawn)) - 1)];
      if (action.kind == Kind::kWorkerLeaves && alive.size() < 2) continue;  // worker 0 stays
      if (action.kind == Kind::kWorkerJoins && started == kMaxWorkers) continue;
      break;
    }
    action.target = int(draw(0, psCount - 1));
    switch (action.kind) {
      case Kind::kCrashPs:
      case Kind::kStopPs:
      case Kind::kLosePs:
        action.duration = draw.ms(0, 500);
        break;
      case Kind::kPausePs:
        action.duration = draw.ms(200, 1000);
        break;
      case Kind::kPauseWorker:
        action.target = draw.among(alive);
        action.duration = draw.ms(200, 1500);
        break;
      case Kind::kResetPs:
        action.bytes = size_t(draw(1000, 30000));
        break;
      case Kind::kDropPs:
        action.duration = draw.ms(200, 800);
        break;
      case Kind::kLatencyOn:
        action.duration = draw.ms(1, 4);
        action.jitter = draw.ms(0, action.duration.count());
        actions_.push_back(
            {windowEnd(step, draw(30, 150), kTrainSteps), Kind::kLatencyOff, action.target});
        break;
      case Kind::kSliceOn:
        actions_.push_back(
            {windowEnd(step, draw(2, 8), kTrainSteps), Kind::kSliceOff, action.target});
        break;
      case Kind::kRecut: {
        std::vector<int> others;
        for (int count = 1; count <= kMaxPs; ++count) {
          if (count != psCount) others.push_back(count);
        }
        action.target = psCount = draw.among(others);
        break;
      }
      case Kind::kWorkerLeaves: {
        const std::vector<int> leavers(alive.begin() + 1, alive.end());  // never worker 0
        action.target = draw.among(leavers);
        alive.erase(std::find(alive.begin(), alive.end(), action.target));
        break;
      }
      case Kind::kWorkerJoins:
        action.target = started++;
        alive.push_back(action.target);
        break;
      case Kind::kLatencyOff:
      case Kind::kSliceOff:
        break;
    }
    actions_.push_back(action);
  }
  std::stable_sort(actions_.begin(), actions_.end(),
                   [](const Action& a, const Action& b) { return a.step < b.step; });
}

std::vector<std::string> ChaosSchedule::flags() const {
  return {"--ps", std::to_string(ps_), "--workers", std::to_string(workers_),
          "--train-steps", std::to_string(kTrainSteps), "--batch-size", "20",
          // A push of 13 KB: a byte at a time takes a fraction of a second.
          "--hidden-units", "4", "--eval-every-steps", "0",
          "--sync", sync_ ? "true" : "false",
          // Longer than any pause or black hole, which are ridden out, not reconnected; short
          // enough that a stalled exchange ends within seconds.
          "--idle-timeout-seconds", "5", "--peer-timeout-seconds", "10",
          // A crashed ps has a checkpoint to go back to, a few steps old.
          "--checkpoint-every-seconds", "0.1",
          // Each run's history is checked at its end.
          "--record-history"};
}

std::string ChaosSchedule::describe() const {
  std::ostringstream text;
  text << "seed " << seed_ << ": " << ps_ << " ps, " << workers_ << " workers, "
       << (sync_ ? "sync" : "async") << ", " << kTrainSteps << " steps";
  for (const auto& action : actions_) text << "\n  " << describe(action);
  return text.str();
}

std::string ChaosSchedule::describe(const Action& action) {
  std::ostringstream text;
  text << "at step " << action.step << ": ";
  const auto ps = "ps " + std::to_string(action.target);
  const auto ms = std::to_string(action.duration.count()) + " ms";
  switch (action.kind) {
    case Kind::kCrashPs:
      text << "kill -9 " << ps << ", started again after " << ms;
      break;
    case Kind::kStopPs:
      text << "SIGTERM " << ps << ", started again after " << ms;
      break;
    case Kind::kLosePs:
      text << "kill -9 " << ps << " and lose its checkpoint, started again after " << ms;
      break;
    case Kind::kPausePs:
      text << "pause " << ps << " for " << ms << " (a black hole that holds)";
      break;
    case Kind::kPauseWorker:
      text << "pause worker " << action.target << " for " << ms;
      break;
    case Kind::kResetPs:
      text << "reset the connections to " << ps << " after " << action.bytes << " bytes";
      break;
    case Kind::kDropPs:
      text << "a black hole that drops in front of " << ps << " for " << ms;
      break;
    case Kind::kLatencyOn:
      text << "latency " << ms << " +- " << action.jitter.count() << " ms to " << ps;
      break;
    case Kind::kLatencyOff:
      text << "no more latency to " << ps;
      break;
    case Kind::kSliceOn:
      text << "a byte at a time to " << ps;
      break;
    case Kind::kSliceOff:
      text << "whole chunks again to " << ps;
      break;
    case Kind::kRecut:
      text << "the settings name " << action.target << " ps";
      break;
    case Kind::kWorkerLeaves:
      text << "kill -9 worker " << action.target << " for good";
      break;
    case Kind::kWorkerJoins:
      text << "worker " << action.target << " joins";
      break;
  }
  return text.str();
}

void ChaosSchedule::play(InProcessCluster& cluster) const {
  std::set<int> running;  // the ps started, in the cut or not
  for (int i = 0; i < ps_; ++i) {
    cluster.startPs(i, paced);
    running.insert(i);
  }
  for (int w = 0; w < workers_; ++w) cluster.startWorker(w);
  for (const auto& action : actions_) {
    if (!waitFor([&] { return cluster.server(0).globalStep() >= action.step; },
                 std::chrono::seconds(60), milliseconds(2))) {
      throw std::runtime_error("the run stalled at ps 0's global step " +
                               std::to_string(cluster.server(0).globalStep()) +
                               ", short of the step of \"" + describe(action) + "\"");
    }
    log::logger("chaos")->info("Chaos: {} (ps 0 at global step {})", describe(action),
                               cluster.server(0).globalStep());
    const auto proxy = [&]() -> FaultProxy& { return cluster.proxy(action.target); };
    // A ps started again: where its checkpoint, if any, takes it back to.
    const auto restart = [&] {
      cluster.startPs(action.target, paced);
      log::logger("chaos")->info("Chaos: ps {} back at global step {}", action.target,
                                 cluster.server(action.target).globalStep());
    };
    switch (action.kind) {
      case Kind::kCrashPs:
        cluster.crashPs(action.target);
        std::this_thread::sleep_for(action.duration);  // down for that long: nothing to wait for
        restart();
        break;
      case Kind::kStopPs:
        cluster.stopPs(action.target);
        std::this_thread::sleep_for(action.duration);
        restart();
        break;
      case Kind::kLosePs:
        cluster.crashPs(action.target);
        std::filesystem::remove(cluster.checkpointPath(action.target));
        std::this_thread::sleep_for(action.duration);
        restart();
        break;
      case Kind::kPausePs:
        cluster.pausePs(action.target, action.duration);
        break;
      case Kind::kPauseWorker:
        cluster.pauseWorker(action.target, action.duration);
        break;
      case Kind::kResetPs:
        proxy().resetAfter(action.bytes);
        break;
      case Kind::kDropPs:
        proxy().blackHole(action.duration, FaultProxy::BlackHole::kDrop);
        break;
      case Kind::kLatencyOn:
        proxy().setLatency(action.duration, action.jitter);
        break;
      case Kind::kLatencyOff:
        proxy().setLatency({}, {});
        break;
      case Kind::kSliceOn:
        proxy().setSlice(1);
        break;
      case Kind::kSliceOff:
        proxy().setSlice(0);
        break;
      case Kind::kRecut:
        for (int i = 0; i < action.target; ++i) {
          if (running.insert(i).second) cluster.startPs(i, paced);
        }
        cluster.setPsCount(action.target);
        break;
      case Kind::kWorkerLeaves:
        cluster.removeWorker(action.target);
        break;
      case Kind::kWorkerJoins:
        cluster.startWorker(action.target);
        break;
    }
  }
}

}  // namespace pstrain::testing
