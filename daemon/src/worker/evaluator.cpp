#include "pstrain/worker/evaluator.hpp"

#include <pthread.h>
#include <sched.h>

#include "pstrain/common/timestamp.hpp"
#include "pstrain/model/mlp.hpp"

namespace pstrain::worker {

Evaluator::Evaluator(const model::Layout& layout, const data::Examples& test,
                     std::function<void(const Result&)> report)
    : layout_(layout), test_(test), report_(std::move(report)) {
  thread_ = std::thread([this] { run(); });
}

Evaluator::~Evaluator() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Evaluator::submit(const float* params, std::uint64_t localStep, std::uint64_t globalStep) {
  Snapshot snapshot{AlignedVector<float>(params, params + layout_.parameterCount()),
                    Result{localStep, globalStep, unixTime(), 0.0}};
  std::lock_guard<std::mutex> lock(mutex_);
  if (queued_.size() == kMaxQueued) queued_.pop_front();
  queued_.push_back(std::move(snapshot));
  changed_.notify_all();
}

void Evaluator::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queued_.empty() && !evaluating_; });
}

void Evaluator::run() {
  // Only what no other thread of the machine wants: never a core the training could use.
  sched_param lowest{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &lowest);
  model::Mlp mlp(layout_);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
    if (queued_.empty()) return;
    auto snapshot = std::move(queued_.front());
    queued_.pop_front();
    evaluating_ = true;
    changed_.notify_all();  // a place in the queue is free
    lock.unlock();
    snapshot.result.accuracy = model::accuracy(mlp, snapshot.params.data(), test_.pixels.data(),
                                               test_.labels.data(), test_.count);
    report_(snapshot.result);
    lock.lock();
    evaluating_ = false;
    changed_.notify_all();
  }
}

}  // namespace pstrain::worker
