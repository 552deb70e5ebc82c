#include "pstrain/observe/progress.hpp"

#include <cmath>
#include <limits>

namespace pstrain::observe {

Progress::Progress(Role role, int ordinal, std::uint64_t trainSteps, Events& events)
    : role_(role),
      ordinal_(ordinal),
      trainSteps_(trainSteps),
      events_(events),
      loss_(std::numeric_limits<float>::quiet_NaN()),
      testAccuracy_(std::numeric_limits<double>::quiet_NaN()) {
  events_.emit(event::state(state_));
}

void Progress::setState(State state) {
  if (state_.exchange(state) != state) events_.emit(event::state(state));
}

void Progress::recordStep(std::uint64_t globalStep, float loss) {
  globalStep_ = globalStep;
  if (!std::isnan(loss)) loss_ = loss;
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!windowStarted_) {  // the first step starts the clock: start-up is not training time
    windowStarted_ = true;
    windowStart_ = now;
    windowStep_ = globalStep;
    return;
  }
  double seconds = std::chrono::duration<double>(now - windowStart_).count();
  if (seconds >= 1.0) {
    rate_ = double(globalStep - windowStep_) / seconds;
    windowStart_ = now;
    windowStep_ = globalStep;
  }
}

double Progress::stepsPerSecond() const {
  if (state_ != State::kTraining) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  return rate_;
}

void Progress::setPeers(std::vector<std::string> peers) {
  std::lock_guard<std::mutex> lock(mutex_);
  peers_ = std::move(peers);
}

std::vector<std::string> Progress::peers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peers_;
}

void Progress::setRun(Run run) {
  std::lock_guard<std::mutex> lock(mutex_);
  run_ = std::move(run);
}

void Progress::setDataSet(std::string name) {
  std::lock_guard<std::mutex> lock(mutex_);
  run_.dataSet = std::move(name);
}

Progress::Run Progress::run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return run_;
}

void Progress::setResult(Result result) {
  const Event recorded = event::model(result.modelPath, result.globalStep, result.testAccuracy,
                                      result.trainingElapsedSeconds);
  result.endedAt = recorded.time;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    result_ = std::move(result);
  }
  events_.emit(recorded);
}

std::optional<Progress::Result> Progress::result() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return result_;
}

void Progress::setPsHttp(PsHttp ps) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& known : psHttp_) {
    if (known.ps == ps.ps) {
      known = std::move(ps);
      return;
    }
  }
  psHttp_.push_back(std::move(ps));
}

std::vector<Progress::PsHttp> Progress::psHttp() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return psHttp_;
}

void Progress::setCut(Cut cut) {
  std::lock_guard<std::mutex> lock(mutex_);
  cut_ = cut;
}

std::optional<Progress::Cut> Progress::cut() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cut_;
}

}  // namespace pstrain::observe
