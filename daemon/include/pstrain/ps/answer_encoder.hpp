#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "pstrain/net/wire_encoding.hpp"
#include "pstrain/ps/buffer_pool.hpp"
#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// The parameters an answer carries, in a cut's pull encoding. With fp32 they go as they are.
// With a lossy encoding the ps keeps, for each worker, the copy of the slice its answers have
// built (the worker holds the same, bit for bit, since both add the same decoded changes with
// net::decodeValues), and sends the change from that copy to the parameters, encoded. What the
// encoding lost stays in the difference, so the next answer carries it: the error never
// accumulates. A worker's first answer is whole, in fp32.
//
// In sync mode every worker holds the same copy and is answered the same parameters, so one
// encoding serves all of them: the encodings made last are kept and given again for the same
// copy and parameters. A worker whose first answer comes at parameters just encoded for the
// others is given their copy whole, and shares their encodings from then on.
class AnswerEncoder {
 public:
  // What a worker holds of the slice, as the ps tracks it; null: nothing yet.
  using Copy = std::shared_ptr<const float>;

  struct Encoded {
    net::WireEncoding encoding;  // fp32: whole parameters; else a change to add to the copy
    const float* values;         // the wire's 32-bit words
    size_t words;
    Copy after;                  // the copy the worker holds once it has this answer
    std::shared_ptr<const void> keep;  // holds `values` while the answer is sent
  };

  AnswerEncoder(net::WireEncoding encoding, size_t count);

  net::WireEncoding encoding() const { return encoding_; }

  // The answer that takes a worker holding `held` to `params`.
  Encoded encode(const Copy& held, const Shard::Params& params);

 private:
  struct Made {
    Copy from;
    Shard::Params params;
    Encoded encoded;
  };
  // Kept for workers whose copies differ (one that joined mid-step, async workers).
  static constexpr size_t kKept = 4;

  Encoded whole(const Shard::Params& params);
  Encoded change(const Copy& held, const Shard::Params& params);

  const net::WireEncoding encoding_;
  const size_t count_;
  // An answer's copy and words come from pools: one of each per answer, per worker in async mode,
  // and a fresh allocation of that size is zeroed by the kernel page by page.
  const std::shared_ptr<BufferPool> copies_;
  const std::shared_ptr<BufferPool> words_;
  std::mutex mutex_;
  std::deque<Made> made_;  // newest first
};

}  // namespace pstrain::ps
