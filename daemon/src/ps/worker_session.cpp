#include "pstrain/ps/worker_session.hpp"

#include <chrono>
#include <string>

#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/common/timestamp.hpp"

namespace pstrain::ps {
namespace {

// How long a push released by a re-cut's freeze waits for the cut that follows.
constexpr std::chrono::milliseconds kFrozenWait{30000};

}  // namespace

WorkerSession::~WorkerSession() {
  if (froze_) shared_.control.thaw(*froze_);
  if (member_) shared_.members.leave(worker_);
}

void WorkerSession::serve() {
  for (;;) {
    const auto& frame = channel_.receive();
    if (!member_) {
      shared_.members.join(worker_);
      member_ = true;
    }
    // The worker's step is over once its next request is here (a push: once it is applied).
    if (frame.type != net::MessageType::kPush) place_.leave();
    const bool chiefRecuts = frame.type == net::MessageType::kCutFreeze ||
                             frame.type == net::MessageType::kSliceState ||
                             frame.type == net::MessageType::kCutCommit;
    if (chiefRecuts && worker_ != 0) {
      throw ProtocolError("worker " + std::to_string(worker_) + " sent " +
                          net::messageName(frame.type) + ": only worker 0 re-cuts the ps");
    }
    if (shared_.cut->superseded() && !chiefRecuts) {
      if (frame.type == net::MessageType::kPush) {
        const auto push = net::decodePush(frame.fields);
        shared_.observer.pushRefused(worker_, push.incarnation, push.pushNumber,
                                     shared_.cut->position().generation,
                                     shared_.cut->shard().state().globalStep,
                                     ServerObserver::Refusal::kRecut);
      }
      recut();
    }
    switch (frame.type) {
      case net::MessageType::kPull:
        answer(shared_.handle.pull(worker_));
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
      case net::MessageType::kCutFreeze:
        freeze(frame);
        break;
      case net::MessageType::kSliceState:
        prepare(frame);
        break;
      case net::MessageType::kCutCommit:
        commit(frame);
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
  const auto basedOn =
      sentSteps_[(answers_ + net::kMaxPushesInFlight - push.lag) % net::kMaxPushesInFlight];
  const PushRequest request{worker_,  push.localStep,   push.loss,      gradient.get(),
                            basedOn,  push.incarnation, push.pushNumber, push.lag};
  auto given = shared_.handle.push(request);
  if (PSTRAIN_FAILPOINT("ps.after-apply")) given = shared_.handle.push(request);  // planted
  place_.leave();
  gradient.reset();
  // Released unapplied by a re-cut's freeze: it is for the cut that comes next to take.
  if (!given.result.applied && shared_.cut->frozen()) shared_.cut->awaitSuperseded(kFrozenWait);
  if (shared_.cut->superseded()) recut();
  answer(std::move(given));
}

std::shared_ptr<float> WorkerSession::receiveGradient(const net::Push& push, size_t valueCount) {
  if (push.encoding != shared_.pushEncoding) {
    throw ProtocolError("a push encoded " + net::encodingName(push.encoding) + " where this ps takes " +
                        net::encodingName(shared_.pushEncoding) + " (pushEncoding)");
  }
  const auto count = shared_.cut->position().range.count;
  if (push.encoding != net::WireEncoding::kFp32) {
    const auto words = net::encodedWords(push.encoding, count);
    if (valueCount != words) {
      throw ProtocolError("a " + net::encodingName(push.encoding) + " push to " +
                          std::to_string(count) + " parameters carries " +
                          std::to_string(valueCount) + " words, not " + std::to_string(words));
    }
    words_.resize(words);
    // The channel receives 32-bit words; they are floats only in fp32.
    channel_.receiveValues(reinterpret_cast<float*>(words_.data()), words);
    auto gradient = shared_.cut->gradients().take();
    net::decodeValues(push.encoding, words_.data(), count, gradient.get(), false);
    return gradient;
  }
  if (!encoding_ || encoding_->batch() != push.batch) {
    encoding_.emplace(shared_.layout, shared_.cut->position().range, push.batch);
  }
  encoding_->expectValues(valueCount);
  auto& buffers = shared_.cut->gradients();
  auto gradient = buffers.take();
  if (encoding_->dense()) {
    channel_.receiveValues(gradient.get(), shared_.cut->position().range.count);
  } else {
    auto values = buffers.take();
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
  auto values = shared_.cut->gradients().take();
  channel_.receiveValues(values.get(), shared_.cut->position().range.count);
  shared_.handle.adopt(worker_, copy.globalStep, values.get());
}

void WorkerSession::freeze(const net::Incoming& frame) {
  const auto request = net::decodeCutFreeze(frame.fields);
  auto frozen = shared_.control.freeze(request.generation);
  froze_ = frozen.number;
  PSTRAIN_FAILPOINT("recut.frozen");
  for (size_t i = 0; i < frozen.slices.size(); ++i) {
    const auto& [position, slice] = frozen.slices[i];
    net::SliceState state{position.generation,   std::uint32_t(position.psCount),
                          std::uint32_t(position.index), position.range.offset,
                          position.range.count,  slice.globalStep,
                          std::uint32_t(slice.optimizer.moments.size()),
                          {slice.optimizer.scalars[0], slice.optimizer.scalars[1]},
                          std::uint32_t(frozen.slices.size() - 1 - i)};
    // One frame: the parameters, then each moment.
    std::vector<float> values = slice.params;
    for (const auto& moment : slice.optimizer.moments) {
      values.insert(values.end(), moment.begin(), moment.end());
    }
    channel_.send(net::MessageType::kSliceState, net::encode(state), values.data(),
                  values.size());
  }
}

void WorkerSession::prepare(const net::Incoming& frame) {
  const auto state = net::decodeSliceState(frame.fields, shared_.layout.parameterCount());
  const auto count = size_t(state.count);
  if (frame.valueCount != count * (1 + state.moments)) {
    throw ProtocolError("a slice state of " + std::to_string(count) + " parameters and " +
                        std::to_string(state.moments) + " moments carries " +
                        std::to_string(frame.valueCount) + " values");
  }
  std::vector<float> values(frame.valueCount);
  channel_.receiveValues(values.data(), values.size());
  CutSlice given{{state.generation, int(state.psCount), int(state.index),
                  {size_t(state.offset), count}},
                 {state.globalStep, {values.begin(), values.begin() + long(count)}, {}}};
  for (std::uint32_t m = 0; m < state.moments; ++m) {
    const auto begin = values.begin() + long(count * (1 + m));
    given.slice.optimizer.moments.emplace_back(begin, begin + long(count));
  }
  given.slice.optimizer.scalars[0] = state.scalars[0];
  given.slice.optimizer.scalars[1] = state.scalars[1];
  shared_.control.prepare(given);
  acknowledge(state.globalStep);
}

void WorkerSession::commit(const net::Incoming& frame) {
  const auto request = net::decodeCutCommit(frame.fields);
  std::uint64_t globalStep = 0;
  try {
    globalStep = shared_.control.commit(request.generation);
  } catch (const DecodeError& e) {
    throw ProtocolError(std::string("a slice state this ps cannot serve: ") + e.what());
  }
  froze_.reset();
  PSTRAIN_FAILPOINT("recut.installed");
  acknowledge(globalStep);
}

void WorkerSession::acknowledge(std::uint64_t globalStep) {
  channel_.send(net::MessageType::kStatusReply,
                net::encode(net::StatusReply{Role::kPs, std::uint32_t(shared_.index),
                                             globalStep, false}));
}

void WorkerSession::recut() {
  const auto now = shared_.control.cut();
  channel_.send(net::MessageType::kRecut,
                net::encode(net::Recut{now.generation, std::uint32_t(now.psCount)}));
  throw UnreachableError("the ps were re-cut (generation " + std::to_string(now.generation) +
                         ", " + std::to_string(now.psCount) + " ps): the worker connects again");
}

void WorkerSession::finish(const net::Incoming& frame) {
  const auto done = net::decodeDone(frame.fields);
  shared_.observer.workerFinished(worker_, done.localSteps);
  const auto now = shared_.cut->shard().state();
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
    auto now = shared_.cut->shard().read();
    result.params = std::move(now.params);
    result.paramsStep = now.paramsStep;
  }
  answers_ += 1;
  sentSteps_[answers_ % net::kMaxPushesInFlight] = result.paramsStep;
  const double seconds = given.seconds + secondsSince(start);
  const auto part = shared_.members.divisionOf(worker_);
  const auto encoded = shared_.cut->answers().encode(copy_, result.params);
  copy_ = encoded.after;
  channel_.send(net::MessageType::kParams,
                net::encode(net::Params{result.globalStep, result.applied, result.done,
                                        std::uint32_t(seconds * 1e6), held, part.rank,
                                        part.workers, encoded.encoding}),
                encoded.values, encoded.words);
}

}  // namespace pstrain::ps
