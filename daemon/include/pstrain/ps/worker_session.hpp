#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "pstrain/net/channel.hpp"
#include "pstrain/ps/buffer_pool.hpp"
#include "pstrain/ps/membership.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "pstrain/ps/request_handle.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/step_gate.hpp"

namespace pstrain::ps {

// One admitted worker's channel to a ps, from its welcome on: receives its requests (pull,
// push, shard copy, done), decodes them, hands pulls, pushes and copies to the request handle
// and answers. It owns what is this worker's alone: the step of the parameters it was sent last
// (its next gradient's), its place at the step gate and the encoding of its latest push.
class WorkerSession {
 public:
  // What the sessions of one ps share.
  struct Shared {
    int index;  // of the ps
    ShardRange range;
    const model::Layout& layout;
    std::uint64_t trainSteps;
    RequestHandle& handle;
    Shard& shard;  // read for the parameters an answer held at the gate goes with
    StepGate& gate;
    const Membership& members;
    BufferPool& buffers;  // where pushes and copies are received
    ServerObserver& observer;
  };

  // `sentStep`: the step of the parameters the worker holds after its welcome.
  WorkerSession(const Shared& shared, net::Channel& channel, std::uint32_t worker,
                std::uint64_t sentStep)
      : shared_(shared), channel_(channel), worker_(worker), sentStep_(sentStep),
        place_(shared.gate) {}

  // Serves the worker until its channel ends, by the exception that ends it; throws
  // ProtocolError for a request a ps does not accept.
  [[noreturn]] void serve();

 private:
  void push(const net::Incoming& frame);
  void adopt(const net::Incoming& frame);
  void finish(const net::Incoming& frame);
  // The shard's dense gradient of a push, received as its encoding says.
  std::shared_ptr<float> receiveGradient(const net::Push& push, size_t valueCount);
  // Answers a pull or a push with the parameters after it, and how long the ps held it.
  void answer(RequestHandle::Answer given);

  const Shared shared_;
  net::Channel& channel_;
  const std::uint32_t worker_;
  std::uint64_t sentStep_;
  // Inside the gate from an answer until the worker's request that ends its turn.
  StepGate::Place place_;
  std::optional<PushEncoding> encoding_;  // of this worker's latest push
};

}  // namespace pstrain::ps
