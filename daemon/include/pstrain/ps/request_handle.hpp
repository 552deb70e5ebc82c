#pragma once

#include <cstdint>

#include "pstrain/ps/shard.hpp"

namespace pstrain::ps {

// A worker's push as the ps decoded it: the shard's dense gradient, whatever went on the wire.
struct PushRequest {
  std::uint32_t worker;
  std::uint64_t localStep;  // the worker's own step
  float loss;               // of the batch behind the gradient
  const float* gradient;    // the shard's count of floats
  std::uint64_t basedOn;    // the global step of the parameters it was computed on
  std::uint64_t incarnation;  // of the worker's client, and its number for the push: whose
  std::uint64_t pushNumber;   // push it is (net::Push)
  std::uint32_t lag;          // the worker's answers in flight when it computed it (net::Push)
};

// What a ps does with its workers' requests, as ps-lite's request handle: the serving loop
// (Server, WorkerSession) receives and decodes each request and hands it here, and answers the
// worker with what the handle returns. UpdateRule is the default.
class RequestHandle {
 public:
  // The parameters a request is answered with, and how long the handle held it.
  struct Answer {
    Shard::StepResult result;
    double seconds;
  };

  virtual ~RequestHandle() = default;

  // `worker` asks for the parameters (it connected, or reconnected).
  virtual Answer pull(std::uint32_t worker) = 0;
  virtual Answer push(const PushRequest& request) = 0;
  // `worker`'s copy of the shard at `globalStep`, offered to a ps that came back without its
  // checkpoint; answered with nothing.
  virtual void adopt(std::uint32_t worker, std::uint64_t globalStep, const float* values) = 0;
};

}  // namespace pstrain::ps
