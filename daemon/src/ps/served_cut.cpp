#include "pstrain/ps/served_cut.hpp"

namespace pstrain::ps {

ServedCut::ServedCut(CutPosition position, const UpdateRule::Options& rule,
                     std::vector<float> params, std::unique_ptr<Optimizer> optimizer,
                     const Checkpointer::Options& checkpoints, ServerObserver& observer,
                     std::function<void()> completed, net::WireEncoding pullEncoding)
    : position_(position),
      rule_(rule, std::move(params), std::move(optimizer), observer, std::move(completed)),
      checkpointer_(checkpoints, rule_.shard(), observer),
      gradients_(BufferPool::create(position.range.count)),
      answers_(pullEncoding, position.range.count) {}

void ServedCut::freeze() {
  frozen_ = true;
  rule_.stop(ServerObserver::Refusal::kFrozen);
  // Stopped first: where the last write fails (a full disk), no periodic write of this cut can
  // come after the next cut's checkpoint at the same path.
  checkpointer_.stop();
  checkpointer_.write();
}

void ServedCut::supersede() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    superseded_ = true;
  }
  replaced_.notify_all();
}

void ServedCut::awaitSuperseded(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  replaced_.wait_for(lock, timeout, [this] { return bool(superseded_); });
}

}  // namespace pstrain::ps
