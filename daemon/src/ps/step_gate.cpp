#include "pstrain/ps/step_gate.hpp"

namespace pstrain::ps {

bool StepGate::Place::enter() {
  if (inside_ || gate_.capacity_ <= 0) return false;
  std::unique_lock<std::mutex> lock(gate_.mutex_);
  if (gate_.open_) return false;
  const auto ticket = gate_.issued_++;
  if (gate_.inside_ < gate_.capacity_ && gate_.admitted_ == ticket) {
    ++gate_.admitted_;
    ++gate_.inside_;
    inside_ = true;
    return false;
  }
  gate_.changed_.wait(lock, [&] { return ticket < gate_.admitted_ || gate_.open_; });
  // Admitted tickets count as inside; one let through by open() does not.
  inside_ = ticket < gate_.admitted_;
  return true;
}

void StepGate::Place::leave() {
  if (!inside_) return;
  inside_ = false;
  std::lock_guard<std::mutex> lock(gate_.mutex_);
  --gate_.inside_;
  if (gate_.admitted_ < gate_.issued_) {
    ++gate_.admitted_;
    ++gate_.inside_;
    gate_.changed_.notify_all();
  }
}

void StepGate::open() {
  std::lock_guard<std::mutex> lock(mutex_);
  open_ = true;
  changed_.notify_all();
}

int StepGate::waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_ ? 0 : int(issued_ - admitted_);
}

int StepGate::inside() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return inside_;
}

}  // namespace pstrain::ps
