#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "pstrain/ps/answer_encoder.hpp"
#include "pstrain/ps/buffer_pool.hpp"
#include "pstrain/ps/checkpointer.hpp"
#include "pstrain/ps/cut_position.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/update_rule.hpp"

namespace pstrain::ps {

// One cut as a ps serves it: its slice in the update rule (shard, optimizer), its checkpoints
// and the buffers pushes are received in. A re-cut replaces it whole; the sessions begun on the
// old one hold it until they end, and answer that the ps were re-cut.
class ServedCut {
 public:
  ServedCut(CutPosition position, const UpdateRule::Options& rule, std::vector<float> params,
            std::unique_ptr<Optimizer> optimizer, const Checkpointer::Options& checkpoints,
            ServerObserver& observer, std::function<void()> completed,
            net::WireEncoding pullEncoding = net::WireEncoding::kFp32);

  const CutPosition& position() const { return position_; }
  UpdateRule& rule() { return rule_; }
  Shard& shard() { return rule_.shard(); }
  Checkpointer& checkpointer() { return checkpointer_; }
  BufferPool& gradients() { return *gradients_; }
  AnswerEncoder& answers() { return answers_; }

  // Applies no push from now on, releases the pushes at the sync barrier, writes its last
  // checkpoint and stops writing them: a re-cut takes its slice.
  void freeze();
  bool frozen() const { return frozen_; }
  // Replaced (by the re-cut's cut, or by itself thawed): every request made of it is answered so.
  void supersede();
  bool superseded() const { return superseded_; }
  // Of a frozen cut: until it is replaced, at most `timeout`.
  void awaitSuperseded(std::chrono::milliseconds timeout);

 private:
  const CutPosition position_;
  UpdateRule rule_;
  Checkpointer checkpointer_;  // after rule_: its thread ends before the shard does
  std::shared_ptr<BufferPool> gradients_;
  AnswerEncoder answers_;
  std::atomic<bool> frozen_{false};
  std::mutex mutex_;
  std::condition_variable replaced_;
  std::atomic<bool> superseded_{false};
};

}  // namespace pstrain::ps
