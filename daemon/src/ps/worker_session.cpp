#include "pstrain/ps/worker_session.hpp"

#include <chrono>
#include <string>

#include "pstrain/common/error.hpp"
#include "pstrain/common/timestamp.hpp"

namespace pstrain::ps {

void WorkerSession::serve() {
  for (;;) {
    const auto& frame = channel_.receive();
    // The worker's step is over once its next request is here (a push: once it is applied).
    if (frame.type != net::MessageType::kPush) place_.leave();
    switch (frame.type) {
      case net::MessageType::kPull:
        answer(shared_.handle.pull());
        break;
      case net::MessageType::kPush:
        push(frame);
        break;
      case net::MessageType::kShardCopy:
        adopt(frame);
        break;
      case net::MessageType::kDone:
        finish(frame);
        break;
      default:
        throw ProtocolError("a ps does not accept " + net::messageName(frame.type) +
                            " messages after the handshake");
    }
  }
}

void WorkerSession::push(const net::Incoming& frame) {
  const auto push = net::decodePush(frame.fields);
  auto gradient = receiveGradient(push, frame.valueCount);
  auto given =
      shared_.handle.push({worker_, push.localStep, push.loss, gradient.get(), sentStep_});
  place_.leave();
  gradient.reset();
  answer(std::move(given));
}

std::shared_ptr<float> WorkerSession::receiveGradient(const net::Push& push, size_t valueCount) {
  if (!encoding_ || encoding_->batch() != push.batch) {
    encoding_.emplace(shared_.layout, shared_.range, push.batch);
  }
  encoding_->expectValues(valueCount);
  auto gradient = shared_.buffers.take();
  if (encoding_->dense()) {
    channel_.receiveValues(gradient.get(), shared_.range.count);
  } else {
    auto values = shared_.buffers.take();
    channel_.receiveValues(values.get(), encoding_->valueCount());
    encoding_->decode(values.get(), gradient.get());
  }
  return gradient;
}

void WorkerSession::adopt(const net::Incoming& frame) {
  const auto copy = net::decodeShardCopy(frame.fields);
  if (copy.globalStep == 0 || copy.globalStep > shared_.trainSteps) {
    throw ProtocolError("a shard copy at global step " + std::to_string(copy.globalStep) +
                        " in a run of " + std::to_string(shared_.trainSteps));
  }
  auto values = shared_.buffers.take();
  channel_.receiveValues(values.get(), shared_.range.count);
  shared_.handle.adopt(worker_, copy.globalStep, values.get());
}

void WorkerSession::finish(const net::Incoming& frame) {
  const auto done = net::decodeDone(frame.fields);
  shared_.observer.workerFinished(worker_, done.localSteps);
  const auto now = shared_.shard.state();
  channel_.send(net::MessageType::kStatusReply,
                net::encode(net::StatusReply{Role::kPs, std::uint32_t(shared_.index),
                                             now.globalStep, now.done}));
}

void WorkerSession::answer(RequestHandle::Answer given) {
  auto& result = given.result;
  const auto start = std::chrono::steady_clock::now();
  // An answer that waited at the gate carries the parameters as they are when it goes.
  const bool held = !result.done && place_.enter();
  if (held) {
    auto now = shared_.shard.read();
    result.params = std::move(now.params);
    result.paramsStep = now.paramsStep;
  }
  sentStep_ = result.paramsStep;
  const double seconds = given.seconds + secondsSince(start);
  const auto part = shared_.members.divisionOf(worker_);
  channel_.send(net::MessageType::kParams,
                net::encode(net::Params{result.globalStep, result.applied, result.done,
                                        std::uint32_t(seconds * 1e6), held, part.rank,
                                        part.workers}),
                result.params.get(), shared_.range.count);
}

}  // namespace pstrain::ps
