#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "pstrain/net/channel.hpp"
#include "pstrain/ps/buffer_pool.hpp"
#include "pstrain/ps/cut_control.hpp"
#include "pstrain/ps/membership.hpp"
#include "pstrain/ps/push_encoding.hpp"
#include "pstrain/ps/request_handle.hpp"
#include "pstrain/ps/served_cut.hpp"
#include "pstrain/ps/server_observer.hpp"
#include "pstrain/ps/shard.hpp"
#include "pstrain/ps/step_gate.hpp"

namespace pstrain::ps {

// One admitted worker's channel to a ps, from its welcome on: receives its requests (pull,
// push, shard copy, done), decodes them, hands pulls, pushes and copies to the request handle
// and answers. It owns what is this worker's alone: the steps of the parameters it was sent last
// (its next gradients'), its place at the step gate and the encoding of its latest push.
class WorkerSession {
 public:
  // What the sessions of one ps share.
  struct Shared {
    int index;  // of the ps
    const model::Layout& layout;
    std::uint64_t trainSteps;
    RequestHandle& handle;
    // The cut served when the worker was welcomed: its slice, shard (read for the parameters an
    // answer held at the gate goes with) and the buffers pushes are received in. Once a re-cut
    // has replaced it, every request is answered so (kRecut).
    std::shared_ptr<ServedCut> cut;
    StepGate& gate;
    Membership& members;
    CutControl& control;  // for worker 0's re-cut
    ServerObserver& observer;
    net::WireEncoding pushEncoding;  // every push's; answers go in the cut's (AnswerEncoder)
  };

  // `sentStep`: the step of the parameters the worker holds after its welcome; `member`: whether
  // it was counted among the members already (it leaves them when the session ends).
  WorkerSession(const Shared& shared, net::Channel& channel, std::uint32_t worker,
                std::uint64_t sentStep, bool member)
      : shared_(shared), channel_(channel), worker_(worker), place_(shared.gate),
        member_(member) {
    sentSteps_[0] = sentStep;
  }
  // A re-cut this session froze and did not commit gives the frozen cut back; a worker counted
  // among the members leaves them.
  ~WorkerSession();

  // Serves the worker until its channel ends, by the exception that ends it; throws
  // ProtocolError for a request a ps does not accept.
  [[noreturn]] void serve();

 private:
  void push(const net::Incoming& frame);
  void adopt(const net::Incoming& frame);
  void finish(const net::Incoming& frame);
  // Worker 0's re-cut: freezes the cut and sends its slices; holds the slice it is given; serves
  // it once committed.
  void freeze(const net::Incoming& frame);
  void prepare(const net::Incoming& frame);
  void commit(const net::Incoming& frame);
  // Tells worker 0 the ps holds or serves its slice of the re-cut, at `globalStep`.
  void acknowledge(std::uint64_t globalStep);
  // Once a re-cut replaced the cut: tells the worker to connect again, and ends the session.
  [[noreturn]] void recut();
  // The shard's dense gradient of a push, received as its encoding says.
  std::shared_ptr<float> receiveGradient(const net::Push& push, size_t valueCount);
  // Answers a pull or a push with the parameters after it, and how long the ps held it.
  void answer(RequestHandle::Answer given);

  const Shared shared_;
  net::Channel& channel_;
  const std::uint32_t worker_;
  // The steps of the parameters of the latest answers, the latest at `answers_`: a push with
  // lag L was computed on those of the answer L before it.
  std::array<std::uint64_t, net::kMaxPushesInFlight> sentSteps_{};
  std::uint64_t answers_ = 0;
  // Inside the gate from an answer until the worker's request that ends its turn.
  StepGate::Place place_;
  std::optional<PushEncoding> encoding_;  // of this worker's latest push
  std::vector<std::uint32_t> words_;      // a lossy push's values as received
  AnswerEncoder::Copy copy_;              // what the worker holds (AnswerEncoder)
  // The freeze a re-cut made through this session, until it commits (CutControl::thaw).
  std::optional<std::uint64_t> froze_;
  // Counted among the ps's members (a sync step waits for it) from its first request on, not
  // from its welcome: a worker welcomed here may yet wait at another ps (a new one, for worker 0),
  // and would hold every sync step here until the deadline.
  bool member_ = false;
};

}  // namespace pstrain::ps
