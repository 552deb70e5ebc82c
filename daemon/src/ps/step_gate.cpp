#include "pstrain/ps/step_gate.hpp"

namespace pstrain::ps {

// A place waiting to enter. Each sleeps on its own condition, so a place that leaves wakes only
// the one it lets in: with many workers waiting, no thread wakes to find nothing to do.
struct StepGate::Waiter {
  std::condition_variable admitted;
  bool in = false;
};

bool StepGate::Place::enter() {
  if (inside_ || gate_.capacity_ <= 0) return false;
  std::unique_lock<std::mutex> lock(gate_.mutex_);
  if (gate_.open_) return false;
  if (gate_.inside_ < gate_.capacity_ && gate_.waiting_.empty()) {
    ++gate_.inside_;
    inside_ = true;
    return false;
  }
  Waiter self;
  gate_.waiting_.push_back(&self);
  self.admitted.wait(lock, [&] { return self.in || gate_.open_; });
  inside_ = self.in;  // one let through by open() does not count as inside
  return true;
}

void StepGate::Place::leave() {
  if (inside_ && ++steps_ >= gate_.turnSteps_) release();
}

void StepGate::Place::release() {
  if (!inside_) return;
  inside_ = false;
  steps_ = 0;
  std::lock_guard<std::mutex> lock(gate_.mutex_);
  --gate_.inside_;
  if (gate_.waiting_.empty()) return;
  Waiter* next = gate_.waiting_.front();
  gate_.waiting_.pop_front();
  next->in = true;
  ++gate_.inside_;
  next->admitted.notify_one();
}

void StepGate::open() {
  std::lock_guard<std::mutex> lock(mutex_);
  open_ = true;
  for (Waiter* waiter : waiting_) waiter->admitted.notify_one();
  waiting_.clear();
}

int StepGate::inside() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return inside_;
}

int StepGate::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return int(waiting_.size());
}

}  // namespace pstrain::ps
