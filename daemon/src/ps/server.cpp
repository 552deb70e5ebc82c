#include "pstrain/ps/server.hpp"

#include <fmt/format.h>

#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/common/value_checksum.hpp"
#include "pstrain/net/handshake.hpp"
#include "pstrain/net/limits.hpp"
#include "pstrain/ps/worker_session.hpp"

namespace pstrain::ps {
namespace {

// The planted faults of the failpoint recut.install: the slice loses values on its way in,
// all of them or its last `argument` parameters with their moments.
Shard::Slice spoilt(const Shard::Slice& slice, failpoint::Hit planted) {
  auto values = slice;
  const size_t count = values.params.size();
  const size_t from = planted.action == failpoint::Action::kZero
                          ? 0
                          : count - std::min<size_t>(count, planted.argument);
  std::fill(values.params.begin() + long(from), values.params.end(), 0.0f);
  for (auto& moment : values.optimizer.moments) {
    std::fill(moment.begin() + long(from), moment.end(), 0.0f);
  }
  return values;
}

}  // namespace

Server::Server(ServerOptions options, ServerObserver& observer)
    : options_(std::move(options)),
      observer_(observer),
      gate_(options_.concurrentWorkers),
      members_([this](int connected) {
        // Under the cut mutex, so that a cut installed meanwhile starts from the latest count.
        std::lock_guard<std::mutex> lock(cutMutex_);
        connected_ = connected;
        if (cut_) cut_->shard().setWorkers(connected);
      }) {
  const CutPosition configured{0, options_.ps, options_.index, options_.range};
  const auto saved =
      Checkpointer::read(options_.checkpointPath, options_.runId, observer_);
  // A ps beyond the run's ps (removed from the settings, and killed before worker 0 cut it out)
  // serves its checkpoint's slice until then: it may be the only copy of it.
  if (options_.index >= options_.ps && !(saved && saved->cut.psCount > 0)) {
    throw ConfigError(fmt::format("index {} is out of range: there are {} ps processes (key ps), "
                                  "and no checkpoint of this run here to serve until worker 0 "
                                  "cuts this ps out",
                                  options_.index, options_.ps));
  }
  // A checkpoint of this run holds the cut this ps served last, whatever the configuration says
  // now: the number of ps changes during a run.
  if (saved && saved->cut.psCount > 0 && !(saved->cut == configured)) {
    cut_ = makeCut(saved->cut, std::vector<float>(saved->cut.range.count));
  } else {
    cut_ = makeCut(configured, std::move(options_.initial));
  }
  if (saved) cut_->checkpointer().restore(*saved);
  const auto state = cut_->shard().state();
  if (state.globalStep > 0) {  // restored under way: the chief has been here before
    chiefJoined_ = true;
    cut_->rule().startClock();
  }
  const auto& range = cut_->position().range;
  observer_.loaded(range, options_.layout.parameterCount(), options_.description);
}

void Server::announce() {
  const auto cut = current();
  const auto state = cut->shard().state();
  observer_.serving(cut->position(), state.globalStep, state.done);
}

std::shared_ptr<ServedCut> Server::makeCut(const CutPosition& position,
                                           std::vector<float> params) {
  auto shard = options_.shard;
  shard.offset = position.range.offset;
  return std::make_shared<ServedCut>(
      position, UpdateRule::Options{options_.index, position.generation, shard},
      std::move(params),
      options_.makeOptimizer(position.range.count),
      Checkpointer::Options{options_.checkpointPath, options_.checkpointEverySeconds,
                            options_.runId, position},
      observer_, [this] {
        gate_.open();
        current()->checkpointer().writeOrReport();
      },
      options_.pullEncoding);
}

std::shared_ptr<ServedCut> Server::current() const {
  std::lock_guard<std::mutex> lock(cutMutex_);
  return cut_;
}

std::uint32_t Server::maxPayload() const {
  return net::maxFrameBytes(
      {net::MessageType::kPush, net::MessageType::kShardCopy, net::MessageType::kSliceState},
      options_.layout.parameterCount());
}

CutControl::Frozen Server::freeze(std::uint64_t generation) {
  std::shared_ptr<ServedCut> cut;
  Frozen frozen;
  std::optional<std::pair<CutSlice, std::uint64_t>> kept, unserved;
  std::uint64_t unservedAt = 0;
  {
    std::lock_guard<std::mutex> lock(cutMutex_);
    if (generation <= cut_->position().generation) {
      throw ProtocolError("a re-cut to generation " + std::to_string(generation) +
                          ", but this ps serves generation " +
                          std::to_string(cut_->position().generation));
    }
    frozen_ = cut = cut_;
    prepared_.reset();
    frozen.number = ++freezes_;
    kept = kept_;
    unserved = unserved_;
    unservedAt = unservedAt_;
  }
  cut->freeze();
  auto slice = cut->shard().slice();  // frozen: the checksum is of the same values
  observer_.cutFrozen(generation, ServerObserver::SliceValues::of(cut->position(),
                                                                  cut->shard().checksum()),
                      slice.globalStep);
  if (slice.globalStep != unservedAt) unserved.reset();  // trained on since: stale
  frozen.slices.push_back({cut->position(), std::move(slice)});
  for (const auto* follow : {&kept, &unserved}) {
    if (!*follow) continue;
    const auto& [given, checksum] = **follow;
    observer_.cutFrozen(generation, ServerObserver::SliceValues::of(given.position, checksum),
                        given.slice.globalStep);
    frozen.slices.push_back(given);
  }
  return frozen;
}

void Server::prepare(const CutSlice& given) {
  std::lock_guard<std::mutex> lock(cutMutex_);
  if (!frozen_) {
    throw ProtocolError("a slice of the re-cut to generation " +
                        std::to_string(given.position.generation) + " for a ps not frozen");
  }
  prepared_ = given;
  if (const auto hit = PSTRAIN_FAILPOINT("recut.install")) {
    prepared_->slice = spoilt(given.slice, hit);
  }
}

std::uint64_t Server::commit(std::uint64_t generation) {
  CutSlice prepared;
  std::shared_ptr<ServedCut> frozen;
  {
    std::lock_guard<std::mutex> lock(cutMutex_);
    if (!prepared_ || prepared_->position.generation != generation || !frozen_) {
      throw ProtocolError("a commit of the re-cut to generation " + std::to_string(generation) +
                          ", but this ps holds no slice of it");
    }
    prepared = *prepared_;  // held until the new cut is served, should it not be
    frozen = frozen_;
  }
  auto cut = cutOf(prepared.position, prepared.slice);
  const auto checksum = cut->shard().checksum();  // before any push can change it
  // Written before the cut is served: where it cannot be (a full disk), the re-cut stops here
  // and the frozen cut is thawed; a ps killed once it serves the new cut comes back with it.
  if (prepared.position.range.count > 0) cut->checkpointer().write();
  // Recorded before any push to the cut can be.
  observer_.cutInstalled(prepared.position, prepared.slice.globalStep, checksum);
  std::shared_ptr<ServedCut> old;
  {
    std::lock_guard<std::mutex> lock(cutMutex_);
    prepared_.reset();
    unserved_.reset();
    // Frozen: no push changes it any more.
    kept_.emplace(CutSlice{frozen->position(), frozen->shard().slice()},
                  frozen->shard().checksum());
    old = serveLocked(cut);
  }
  old->supersede();
  return prepared.slice.globalStep;
}

void Server::thaw(std::uint64_t number) {
  std::shared_ptr<ServedCut> frozen;
  {
    std::lock_guard<std::mutex> lock(cutMutex_);
    if (number != freezes_) return;  // frozen again since, by a worker 0 started again
    if (!frozen_ || frozen_ != cut_) return;  // committed meanwhile, or never frozen
    frozen = frozen_;
    if (prepared_) {
      const auto& [position, slice] = *prepared_;
      std::vector<const float*> moments;
      for (const auto& moment : slice.optimizer.moments) moments.push_back(moment.data());
      const auto checksum = valueChecksum(position.range.offset, position.range.count,
                                          slice.params.data(), moments);
      unserved_.emplace(std::move(*prepared_), checksum);
      unservedAt_ = frozen->shard().state().globalStep;
      prepared_.reset();
    }
  }
  auto cut = cutOf(frozen->position(), frozen->shard().slice());
  observer_.cutThawed(ServerObserver::SliceValues::of(frozen->position(), cut->shard().checksum()),
                      frozen->shard().state().globalStep);
  {
    std::lock_guard<std::mutex> lock(cutMutex_);
    serveLocked(cut);
  }
  frozen->supersede();
  // The frozen cut wrote these values as it froze, unless the disk had no room then; a failure
  // is reported (this runs as a session ends, where nothing may throw).
  if (cut->position().range.count > 0) cut->checkpointer().writeOrReport();
}

std::shared_ptr<ServedCut> Server::cutOf(const CutPosition& position, const Shard::Slice& slice) {
  auto cut = makeCut(position, slice.params);
  cut->shard().resume(slice.globalStep, slice.optimizer);
  return cut;
}

std::shared_ptr<ServedCut> Server::serveLocked(std::shared_ptr<ServedCut> cut) {
  auto old = std::move(cut_);
  cut->rule().continueClock(old->rule());
  cut->shard().setWorkers(connected_);
  cut_ = std::move(cut);
  frozen_.reset();
  return old;
}

void Server::stop() {
  halt();
  current()->checkpointer().writeOrReport();
}

void Server::crash() {
  current()->checkpointer().stop();  // first: nothing applied from here on is written
  halt();
}

void Server::halt() {
  {
    std::lock_guard<std::mutex> lock(chiefMutex_);
    stopped_ = true;
  }
  chiefArrived_.notify_all();
  current()->rule().stop(ServerObserver::Refusal::kStopped);
  gate_.open();
}

void Server::setRequestHandle(RequestHandle& handle) { handle_ = &handle; }

void Server::serve(net::Channel& channel) {
  const auto hello =
      net::admit(channel, options_.authKey, [this](const net::Hello& h) { admit(h); });
  const std::uint32_t worker = hello.index;
  channel.setReceiveTimeout(options_.idleTimeoutSeconds);
  observer_.workerArrived(worker, channel.peerName());
  awaitChief(worker, hello.knownStep);
  auto cut = current();
  const auto state = cut->shard().state();
  observer_.workerJoined(worker, channel.peerName(), state.globalStep);
  // Worker 0, which no ps holds for anyone, counts at a sync barrier from before its welcome, so
  // every step of the run waits for it; another worker from its first request (WorkerSession).
  const bool member = worker == 0;
  if (member) members_.join(worker);
  struct Leaving {
    ServerObserver& observer;
    std::uint32_t worker;
    ~Leaving() { observer.workerLeft(worker); }
  } leaving{observer_, worker};
  const auto& position = cut->position();
  channel.send(net::MessageType::kWelcome,
               net::encode(net::Welcome{position.range.offset, position.range.count,
                                        state.globalStep, options_.shard.trainSteps,
                                        std::uint32_t(options_.httpPort), position.generation,
                                        std::uint32_t(position.psCount)}));
  RequestHandle* handle = handle_;
  const WorkerSession::Shared shared{options_.index, options_.layout, options_.shard.trainSteps,
                                     handle ? *handle : cut->rule(), cut, gate_, members_,
                                     *this, observer_, options_.pushEncoding};
  WorkerSession(shared, channel, worker, state.paramsStep, member).serve();
}

void Server::admit(const net::Hello& hello) const {
  // Any worker index: workers join and leave during a run (a StatefulSet scaled up), each
  // known by its index alone.
  if (hello.role != Role::kWorker) {
    throw ProtocolError("hello from " + roleName(hello.role) + " " +
                        std::to_string(hello.index) + ": only workers connect to a ps");
  }
  if (hello.parameterCount != options_.layout.parameterCount() || hello.runId != options_.runId) {
    throw ProtocolError("worker " + std::to_string(hello.index) +
                        " runs a different configuration (model of " +
                        std::to_string(hello.parameterCount) + " parameters, run " +
                        std::to_string(hello.runId) + "; this ps has " +
                        std::to_string(options_.layout.parameterCount()) + ", run " +
                        std::to_string(options_.runId) + ")");
  }
  if (hello.pushEncoding != options_.pushEncoding || hello.pullEncoding != options_.pullEncoding) {
    throw ProtocolError("worker " + std::to_string(hello.index) + " pushes " +
                        net::encodingName(hello.pushEncoding) + " and pulls " +
                        net::encodingName(hello.pullEncoding) + "; this ps takes " +
                        net::encodingName(options_.pushEncoding) + " pushes and answers " +
                        net::encodingName(options_.pullEncoding) +
                        " (pushEncoding, pullEncoding): every process of a run must set the same");
  }
}

void Server::awaitChief(std::uint32_t worker, std::uint64_t knownStep) {
  std::unique_lock<std::mutex> lock(chiefMutex_);
  // A worker that had this ps at a later step is of a run under way, which worker 0 began: a ps
  // back at step 0 without its checkpoint takes its copy of the shard instead of holding it for
  // worker 0, which may itself wait at another ps's sync barrier for this worker's push.
  if (worker == 0 || knownStep > 0) {
    current()->rule().startClock();
    chiefJoined_ = true;
    chiefArrived_.notify_all();
  } else if (!chiefJoined_) {
    observer_.workerWaitsForChief(worker);
    // No longer than the worker waits for its welcome (0: for ever): one that went away meanwhile
    // would hold this thread and its connection until the chief came, if ever.
    const auto done = [this] { return chiefJoined_ || stopped_; };
    const std::chrono::duration<double> timeout(options_.peerTimeoutSeconds);
    if (timeout.count() > 0) {
      chiefArrived_.wait_for(lock, timeout, done);
    } else {
      chiefArrived_.wait(lock, done);
    }
    if (!chiefJoined_) {
      throw UnreachableError(stopped_ ? std::string("the ps stopped before worker 0 arrived")
                                      : fmt::format("worker 0 has not arrived within {:g} s",
                                                    options_.peerTimeoutSeconds));
    }
  }
}

}  // namespace pstrain::ps
