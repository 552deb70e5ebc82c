#pragma once

#include <Poco/JSON/Object.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "pstrain/observe/downsampled_series.hpp"

namespace pstrain::observe {

// The file each process writes in its log dir.
inline constexpr const char* kEventsFile = "events.jsonl";

enum class State { kWaiting, kTraining, kCompleted };
std::string stateName(State state);

// The machine-readable record of one process: what happened, one JSON object a line in
// `events.jsonl` beside deploy.log, and the latest events in memory for GET /events. The plot,
// the tests and the page read these; people read deploy.log, whose wording may change.
// Every object has time (Unix seconds), role, index and event, then the event's own fields;
// the methods below are the one place that names events and fields (docs/operations.md, "Events").
// Safe to call from any thread.
class Events {
 public:
  // `role`: "ps", "worker", "local" or "serve". `path`: the file to append to, or "" for
  // memory only. Keeps the latest `capacity` events for since(), and up to `curvePoints` of
  // each curve of the whole run for history().
  Events(std::string role, int index, const std::string& path = "", size_t capacity = 8192,
         size_t curvePoints = 1000);
  // Writes out what the file has not yet received.
  ~Events();

  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  void started(const std::string& version, long pid, const std::string& blasCore,
               int blasThreads);
  void state(State state);
  // A ps accepts workers on `port`.
  void listening(int port);
  // A ps's global step (at the cadence of its progress line).
  // `staleness`: the mean of the pushes applied since the previous step event.
  void step(std::uint64_t globalStep, float loss, std::uint32_t worker, std::uint64_t localStep,
            double staleness);
  // A ps at the end of training: the staleness of its pushes over the run (mean, and the bound of
  // the histogram bucket that holds the 99th percentile).
  void staleness(std::uint64_t pushes, double mean, double p99);
  // A worker's own step (at the cadence of its progress line).
  void workerStep(std::uint64_t localStep, std::uint64_t globalStep, float loss);
  // `takenAt`: when the parameters evaluated were taken (Unix seconds); evaluation comes later.
  void accuracy(std::uint64_t localStep, std::uint64_t globalStep, double accuracy,
                double takenAt);
  // A sync step taken at the deadline, with fewer gradients than the workers connected.
  void averaged(std::uint64_t globalStep, int averaged, int workers);
  // Connections: `peer` is "ps HOST:PORT" or "worker N".
  // A worker's part of the training set changed: examples [first, end), part `rank` of `workers`.
  void divided(std::uint32_t rank, std::uint32_t workers, std::uint64_t first, std::uint64_t end);
  void connected(const std::string& peer, std::uint64_t globalStep);
  void lost(const std::string& peer, const std::string& reason);
  void reconnected(const std::string& peer, std::uint64_t globalStep);
  // A worker said it has finished after `localSteps` steps (ps).
  void finished(const std::string& peer, std::uint64_t localSteps);
  void checkpoint(std::uint64_t globalStep, const std::string& path);
  void restored(std::uint64_t globalStep, const std::string& path, bool completed);
  // A ps without a checkpoint took its shard from `peer`'s copy at `globalStep`.
  void recovered(std::uint64_t globalStep, const std::string& peer);
  // A worker found its run completed before it started: it does not train again.
  void alreadyCompleted(std::uint64_t globalStep);
  // Training ended at `globalStep`: a ps at its last step, a worker after its last exchange
  // (worker 0 with the final test accuracy), the launcher with the run's summary.
  void done(std::uint64_t globalStep, double elapsedSeconds,
            std::optional<double> accuracy = std::nullopt);
  // A child of `pstrain local` ended with `status` and was started again.
  void restarted(const std::string& child, int status, int restart);
  // The process ends on `signal` (SIGTERM, SIGINT), after its last checkpoint.
  void stopped(const std::string& signal);

  // The events after sequence number `after` still kept, as the body of GET /events:
  // {"next": M, "events": [...]}, M the number to ask after next time. An `after` beyond the
  // newest (asked of a process since restarted) gets every event kept.
  std::string since(std::uint64_t after) const;
  // The whole run's loss and accuracy curves, downsampled, as the body of GET /history:
  // {"next": M, "loss": [[step, time, loss], ...], "accuracy": [[step, time, accuracy], ...]},
  // M the sequence number of the newest event they include, to ask /events after for what is
  // newer. Loss comes from step events, accuracy from accuracy events (time: `takenAt`).
  std::string history() const;

 private:
  struct Field {
    const char* key;
    std::string json;
  };
  static Field number(const char* key, double value);
  static Field integer(const char* key, std::uint64_t value);
  static Field text(const char* key, const std::string& value);
  // A point an event adds to a curve of history(); its time is the event's unless given.
  struct CurvePoint {
    DownsampledSeries Events::*series;
    std::uint64_t step;
    double value;
    std::optional<double> time = std::nullopt;
  };
  // Steps are written out within a second, everything else at once, as deploy.log's lines.
  void record(const char* event, std::initializer_list<Field> fields, bool urgent = true,
              std::optional<CurvePoint> point = std::nullopt);

  const std::string identity_;  // "role" and "index", as JSON members
  const size_t capacity_;
  std::shared_ptr<spdlog::logger> file_;
  mutable std::mutex mutex_;
  std::deque<std::string> recent_;
  std::uint64_t last_ = 0;  // sequence number of the newest event
  DownsampledSeries loss_;
  DownsampledSeries accuracy_;
};

// The events of an events.jsonl file, in order. A line that is not a whole JSON object (the
// last one of a process killed while writing it) is skipped. Throws IoError when the file
// cannot be read.
std::vector<Poco::JSON::Object::Ptr> readEvents(const std::string& path);

}  // namespace pstrain::observe
