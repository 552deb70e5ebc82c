#include "pstrain/ps/shard.hpp"

#include <algorithm>

#include "pstrain/common/bytes.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/common/value_checksum.hpp"

namespace pstrain::ps {
namespace {

// Parameters per block of a combined update: the block's parameters, moments and gradients stay
// in the L2 cache while every gradient of the batch is applied to it.
constexpr size_t kBlock = 4096;

}  // namespace

ShardRange shardRange(size_t parameterCount, int shards, int index) {
  auto begin = parameterCount * size_t(index) / size_t(shards);
  auto end = parameterCount * size_t(index + 1) / size_t(shards);
  return ShardRange{begin, end - begin};
}

// One push waiting to be served. Its thread sleeps on its own condition until its batch wants
// it, so a batch wakes only the threads it concerns.
struct Shard::Request {
  Request(const float* g, std::uint64_t b) : gradient(g), basedOn(b) {}
  const float* gradient;
  std::uint64_t basedOn;
  std::shared_ptr<Batch> batch;  // set when taken into a batch
  bool applies = false;          // this request's thread applies its batch
  std::condition_variable woken;
  StepResult result{};
};

// Requests served by one pass over the parameters. One thread of the batch applies it; threads
// that arrive while it is under way (awake anyway, with their gradient received) take blocks too,
// so the update uses the cores that pushes keep busy. Whoever finishes the last block ends it.
struct Shard::Batch {
  std::vector<Request*> requests;
  std::vector<const float*> gradients;  // of the requests applied, in order
  const float* in = nullptr;            // the parameters before the batch
  std::shared_ptr<float> out;           // the parameters after it, every answer's
  std::uint64_t outStep = 0;            // the global step `out` is at
  size_t blocks = 0;
  std::atomic<size_t> nextBlock{0};
  std::atomic<size_t> blocksDone{0};
  bool finished = false;  // guarded by the shard's mutex
};

Shard::Shard(std::vector<float> initial, std::unique_ptr<Optimizer> optimizer, Options options)
    : size_(initial.size()),
      optimizer_(std::move(optimizer)),
      options_(options),
      buffers_(BufferPool::create(size_)),
      gradientSum_(options.sync ? size_ : 0, 0.0f) {
  auto params = buffers_->take();
  std::copy(initial.begin(), initial.end(), params.get());
  params_ = std::move(params);
}

Shard::StepResult Shard::resultLocked(bool applied, bool advanced, int averaged) const {
  return StepResult{globalStep_, applied, advanced, globalStep_ >= options_.trainSteps, averaged,
                    workers_, nullptr};
}

Shard::StepResult Shard::push(std::uint32_t worker, const float* gradient,
                              std::uint64_t basedOn, std::uint64_t lag) {
  if (options_.sync) return pushSync(worker, gradient, basedOn, lag);
  return pushAsync(gradient, basedOn);
}

Shard::StepResult Shard::read() {
  std::lock_guard<std::mutex> lock(mutex_);
  return readLocked();
}

Shard::StepResult Shard::read(std::uint32_t worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  awaitBarrierLeft(lock, worker);
  return readLocked();
}

void Shard::awaitBarrierLeft(std::unique_lock<std::mutex>& lock, std::uint32_t worker) {
  if (PSTRAIN_FAILPOINT("shard.sync-barrier")) return;  // planted: let in again
  changed_.wait(lock, [&] { return overLocked() || contributed_.count(worker) == 0; });
}

Shard::StepResult Shard::readLocked() const {
  auto result = resultLocked(false, false, 0);
  result.params = params_;
  result.paramsStep = paramsStep_;
  return result;
}

bool Shard::overLocked() const { return closed_ || globalStep_ >= options_.trainSteps; }

Shard::StepResult Shard::pushAsync(const float* gradient, std::uint64_t basedOn) {
  Request request(gradient, basedOn);
  std::unique_lock<std::mutex> lock(mutex_);
  waiting_.push_back(&request);
  if (inFlight_) {
    auto current = inFlight_;
    lock.unlock();
    applyBlocks(*current, &request);
    lock.lock();
  } else {
    startBatches(&request);
  }
  request.woken.wait(lock, [&] {
    return request.batch && (request.applies || request.batch->finished);
  });
  auto batch = request.batch;
  if (!batch->finished) {
    lock.unlock();
    applyBlocks(*batch, &request);
    lock.lock();
    request.woken.wait(lock, [&] { return batch->finished; });
  }
  return request.result;
}

void Shard::startBatches(Request* self) {
  while (!waiting_.empty() && !inFlight_) {
    auto batch = std::make_shared<Batch>();
    while (!waiting_.empty() && batch->gradients.size() < Optimizer::kMaxSteps) {
      Request* request = waiting_.front();
      waiting_.pop_front();
      request->batch = batch;
      batch->requests.push_back(request);
      if (!closed_ && globalStep_ < options_.trainSteps) {
        batch->gradients.push_back(request->gradient);
        const auto staleness = globalStep_ - std::min(request->basedOn, globalStep_);
        if (PSTRAIN_FAILPOINT("shard.step")) ++globalStep_;  // planted: a step number skipped
        ++globalStep_;
        request->result = resultLocked(true, true, 1);
        request->result.staleness = staleness;
        request->result.appliedStep = globalStep_;
      }
    }
    batch->blocks = (size_ + kBlock - 1) / kBlock;
    const bool applies = !batch->gradients.empty() && batch->blocks > 0;
    // An update writes the next parameters into a buffer of their own, which every answer of the
    // batch carries: the parameters after the whole batch, at least as new as its own step.
    if (applies) {
      batch->in = params_.get();
      batch->out = buffers_->take();
      batch->outStep = globalStep_;
    }
    for (Request* request : batch->requests) {
      if (!request->result.applied) request->result = resultLocked(false, false, 0);
      request->result.params = applies ? Params(batch->out) : params_;
      request->result.paramsStep = applies ? batch->outStep : paramsStep_;
    }
    if (!applies) {
      finishBatch(*batch, self);
      continue;
    }
    optimizer_->beginSteps(batch->gradients.size());
    inFlight_ = batch;
    // A thread that is awake already applies the batch; otherwise the first request's is woken.
    const auto& requests = batch->requests;
    Request* applier = std::find(requests.begin(), requests.end(), self) != requests.end()
                           ? self
                           : requests.front();
    applier->applies = true;
    if (applier != self) applier->woken.notify_one();
  }
}

void Shard::applyBlocks(Batch& batch, Request* self) {
  for (size_t block; (block = batch.nextBlock.fetch_add(1)) < batch.blocks;) {
    const size_t begin = block * kBlock;
    const size_t end = std::min(begin + kBlock, size_);
    optimizer_->applySteps(batch.in, batch.out.get(), batch.gradients.data(), begin, end);
    if (batch.blocksDone.fetch_add(1, std::memory_order_acq_rel) + 1 == batch.blocks) {
      std::lock_guard<std::mutex> lock(mutex_);
      inFlight_.reset();
      params_ = batch.out;
      paramsStep_ = batch.outStep;
      finishBatch(batch, self);
      startBatches(self);
    }
  }
}

void Shard::finishBatch(Batch& batch, Request* self) {
  batch.finished = true;
  for (Request* request : batch.requests) {
    if (request != self) request->woken.notify_one();
  }
  changed_.notify_all();  // serialize() and restore() wait for no batch in flight
}

Shard::StepResult Shard::pushSync(std::uint32_t worker, const float* gradient,
                                  std::uint64_t basedOn, std::uint64_t lag) {
  std::unique_lock<std::mutex> lock(mutex_);
  // A worker gives one gradient per step: one that comes again (it reconnected while its last
  // push waited here) gives it to the next step.
  awaitBarrierLeft(lock, worker);
  StepResult result = resultLocked(false, false, 0);
  if (overLocked()) {
    result.params = params_;
    result.paramsStep = paramsStep_;
    return result;
  }
  const auto staleness = globalStep_ - std::min(basedOn, globalStep_);
  // Computed on parameters the ps no longer holds: those before it adopted a copy (a worker new
  // to the run, or one that read them since the ps restarted), or those of a step before the
  // last (it came after its step closed at the deadline, or this ps closed one before counting
  // a worker that had just connected). Its gradient goes into no step, but the worker takes its
  // place at this one, as its push did at the other ps: otherwise this ps would wait for its
  // next push, which waits for the others' answers there, which wait for this step, until the
  // deadline. Its answer carries this step's parameters.
  const bool replaced = basedOn < adoptedStep_;
  const bool stale = !replaced && staleness > lag;
  if (!replaced && !stale) {
    const float* __restrict g = gradient;
    float* __restrict sum = gradientSum_.data();
    for (size_t i = 0; i < size_; ++i) sum[i] += g[i];
    ++summed_;
  }
  contributed_.insert(worker);
  if (arrivals_++ == 0) stepDeadline_ = std::chrono::steady_clock::now() + options_.syncTimeout;
  if (arrivals_ >= workers_) changed_.notify_all();  // the last to come may not take the step
  const auto step = globalStep_;
  const auto releases = releases_;
  const auto adoptions = adoptions_;
  const auto released = [&] { return closed_ || releases_ != releases; };
  // Every connected worker has come (fewer may be connected by now than when this one came), or
  // the deadline passed without the others: the step is taken with those that came, so a lost
  // worker slows training down instead of stopping it. A push whose gradient is in the step
  // takes it; stale ones alone are let go without one.
  changed_.wait_until(lock, stepDeadline_, [&] { return released() || arrivals_ >= workers_; });
  const bool mine = summed_ > 0 ? !replaced && !stale : true;
  if (!released() && mine) {
    const int averaged = summed_;
    const bool stepped = completeSyncStep();
    result = resultLocked(stepped, stepped, averaged);
  } else {
    changed_.wait(lock, released);
    const bool applied = !replaced && !stale && adoptions_ == adoptions && globalStep_ > step;
    result = resultLocked(applied, false, 0);
  }
  result.replaced = replaced || adoptions_ != adoptions;  // the step's gradients were dropped
  result.stale = stale;
  result.staleness = staleness;
  if (result.applied) result.appliedStep = step + 1;
  result.params = params_;  // of the step this push waited for, or a later one
  result.paramsStep = paramsStep_;
  return result;
}

bool Shard::completeSyncStep() {
  const bool step = summed_ > 0;
  if (step) {
    const float scale = 1.0f / float(summed_);
    for (auto& g : gradientSum_) g *= scale;
    auto next = buffers_->take();
    optimizer_->apply(params_.get(), next.get(), gradientSum_.data(), size_,
                      options_.syncLearningRate.scale(summed_, globalStep_));
    params_ = std::move(next);
    std::fill(gradientSum_.begin(), gradientSum_.end(), 0.0f);
    paramsStep_ = ++globalStep_;
  }
  summed_ = 0;
  contributed_.clear();
  arrivals_ = 0;
  ++releases_;
  changed_.notify_all();
  return step;
}

void Shard::setWorkers(int connected) {
  std::lock_guard<std::mutex> lock(mutex_);
  workers_ = connected;
  changed_.notify_all();
}

void Shard::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

Shard::StepResult Shard::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto result = resultLocked(false, false, 0);
  result.params = params_;
  result.paramsStep = paramsStep_;
  return result;
}

int Shard::arrivals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return arrivals_;
}

Shard::Snapshot Shard::serialize() const {
  Snapshot snapshot;
  ByteWriter out(snapshot.bytes);
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !inFlight_; });
  snapshot.globalStep = globalStep_;
  out.put(std::uint64_t(size_)).putFloats(params_.get(), size_);
  optimizer_->save(out);
  snapshot.checksum = checksumLocked();
  return snapshot;
}

void Shard::restore(std::uint64_t globalStep, const std::vector<std::uint8_t>& bytes) {
  ByteReader in(bytes.data(), bytes.size());
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !inFlight_; });
  if (in.get<std::uint64_t>() != size_) throw DecodeError("shard size differs");
  auto restored = buffers_->take();
  in.getFloats(restored.get(), size_);
  optimizer_->restore(in);
  in.expectEnd();
  replaceLocked(std::move(restored), globalStep);
}

Shard::Slice Shard::slice() const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !inFlight_; });
  return Slice{globalStep_, std::vector<float>(params_.get(), params_.get() + size_),
               optimizer_->state()};
}

std::uint64_t Shard::checksum() const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !inFlight_; });
  return checksumLocked();
}

std::uint64_t Shard::checksumLocked() const {
  return valueChecksum(options_.offset, size_, params_.get(), optimizer_->moments());
}

void Shard::resume(std::uint64_t globalStep, const OptimizerState& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  optimizer_->setState(state);
  paramsStep_ = globalStep_ = globalStep;
}

std::optional<std::uint64_t> Shard::adopt(std::uint64_t globalStep, const float* values) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !inFlight_; });
  if (globalStep <= globalStep_ || overLocked()) return std::nullopt;
  // A sync step under way sums gradients computed on the parameters this replaces: its pushes
  // are answered as replaced, with the copy.
  std::fill(gradientSum_.begin(), gradientSum_.end(), 0.0f);
  summed_ = 0;
  contributed_.clear();
  arrivals_ = 0;
  ++releases_;
  ++adoptions_;
  auto adopted = buffers_->take();
  std::copy(values, values + size_, adopted.get());
  replaceLocked(std::move(adopted), globalStep);
  adoptedStep_ = globalStep;
  changed_.notify_all();
  return checksumLocked();
}

void Shard::replaceLocked(std::shared_ptr<float> params, std::uint64_t globalStep) {
  params_ = std::move(params);
  paramsStep_ = globalStep_ = globalStep;
}

}  // namespace pstrain::ps
