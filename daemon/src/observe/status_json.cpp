#include "pstrain/observe/status_json.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include <cmath>
#include <sstream>

#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/cpu_limit.hpp"

namespace pstrain::observe {
namespace {

Poco::JSON::Object runJson(const Progress::Run& run) {
  Poco::JSON::Object json(Poco::JSON_PRESERVE_KEY_ORDER);
  json.set("data_dir", run.dataDir);
  if (!run.dataSet.empty()) json.set("data_set", run.dataSet);
  Poco::JSON::Array layers;
  for (int width : run.layers) layers.add(width);
  json.set("layers", layers);
  json.set("optimizer", run.optimizer);
  json.set("learning_rate", run.learningRate);
  json.set("batch_size", run.batchSize);
  json.set("sync", run.sync);
  json.set("push_encoding", run.pushEncoding);
  json.set("pull_encoding", run.pullEncoding);
  json.set("started_at", run.startedAt);
  return json;
}

// [{"index":0,"state":"training","local_step":12,"loss":0.5,"seconds_since_seen":0.1}, ...] by
// index; loss absent until known.
Poco::JSON::Array workersJson(const WorkerRoster& workers) {
  Poco::JSON::Array array;
  for (const auto& w : workers.entries()) {
    Poco::JSON::Object entry(Poco::JSON_PRESERVE_KEY_ORDER);
    entry.set("index", w.index);
    entry.set("state", std::string(w.state));
    entry.set("local_step", w.localStep);
    if (!std::isnan(w.loss)) entry.set("loss", double(w.loss));
    entry.set("seconds_since_seen", w.secondsSinceSeen);
    array.add(entry);
  }
  return array;
}

Poco::JSON::Object cutJson(const Progress::Cut& cut) {
  Poco::JSON::Object json(Poco::JSON_PRESERVE_KEY_ORDER);
  json.set("generation", cut.generation);
  json.set("ps_count", cut.psCount);
  json.set("cut_index", cut.index);
  json.set("offset", cut.offset);
  json.set("count", cut.count);
  return json;
}

}  // namespace

std::string statusJson(const Progress& progress, const WorkerRoster* workers,
                       const Meters* meters) {
  Poco::JSON::Object json(Poco::JSON_PRESERVE_KEY_ORDER);
  json.set("role", roleName(progress.role()));
  json.set("ordinal", progress.ordinal());
  json.set("state", stateName(progress.state()));
  json.set("global_step", progress.globalStep());
  json.set("train_steps", progress.trainSteps());
  json.set("local_step", progress.localStep());
  json.set("steps_per_second", progress.stepsPerSecond());
  const float loss = progress.loss();
  if (!std::isnan(loss)) json.set("loss", double(loss));
  const double accuracy = progress.testAccuracy();
  if (!std::isnan(accuracy)) json.set("test_accuracy", accuracy);
  Poco::JSON::Array peers;
  for (const auto& peer : progress.peers()) peers.add(peer);
  json.set("peers", peers);
  json.set("run", runJson(progress.run()));
  if (const auto result = progress.result()) {
    Poco::JSON::Object ended(Poco::JSON_PRESERVE_KEY_ORDER);
    ended.set("model_path", result->modelPath);
    ended.set("global_step", result->globalStep);
    ended.set("test_accuracy", result->testAccuracy);
    ended.set("training_elapsed_s", result->trainingElapsedSeconds);
    ended.set("ended_at", result->endedAt);
    json.set("result", ended);
  }
  if (meters) {
    Poco::JSON::Object bytes(Poco::JSON_PRESERVE_KEY_ORDER);
    bytes.set("sent", meters->traffic.sent.load());
    bytes.set("received", meters->traffic.received.load());
    json.set("bytes", bytes);
  }
  json.set("blas_core", blasCoreInUse());
  json.set("blas_threads", blasThreads());
  if (workers) json.set("workers", workersJson(*workers));
  if (const auto cut = progress.cut()) json.set("cut", cutJson(*cut));
  const auto staleness = meters ? meters->stalenessSummary() : Meters::Staleness{};
  if (staleness.pushes > 0) {
    Poco::JSON::Object summary(Poco::JSON_PRESERVE_KEY_ORDER);
    summary.set("mean", staleness.mean);
    summary.set("p99", staleness.p99);
    json.set("staleness", summary);
  }
  std::ostringstream out;
  json.stringify(out);
  return out.str();
}

}  // namespace pstrain::observe
