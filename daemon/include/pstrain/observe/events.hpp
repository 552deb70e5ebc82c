#pragma once

#include <Poco/JSON/Object.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "pstrain/observe/downsampled_series.hpp"
#include "pstrain/observe/event.hpp"

namespace pstrain::observe {

// The file each process writes in its log dir.
inline constexpr const char* kEventsFile = "events.jsonl";

// The machine-readable record of one process: what happened, one JSON object a line in
// `events.jsonl` beside deploy.log, and the latest events in memory for GET /events. The plot,
// the tests and the page read these; people read deploy.log, whose lines emit() writes from the
// same event. Every object has time (Unix seconds), role, index and event, then the event's own
// fields (event.hpp). Safe to call from any thread.
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

  // Appends `event` to the record and writes its deploy.log lines.
  void emit(const Event& event);

  // The events after sequence number `after` still kept, as the body of GET /events:
  // {"next": M, "events": [...]}, M the number to ask after next time. An `after` beyond the
  // newest (asked of a process since restarted) gets every event kept. `next`, when given, is
  // set to M.
  std::string since(std::uint64_t after, std::uint64_t* next = nullptr) const;
  // The whole run's loss and accuracy curves, downsampled, as the body of GET /history:
  // {"next": M, "loss": [[step, time, loss], ...], "accuracy": [[step, time, accuracy], ...]},
  // M the sequence number of the newest event they include, to ask /events after for what is
  // newer. Loss comes from step events, accuracy from accuracy events (time: `taken_at`).
  std::string history() const;

  // A reader has been sent the events up to sequence number `next` (GET /events, answered).
  void delivered(std::uint64_t next);
  // Before the process exits: if a reader has been sent events within `recent` (a page polls
  // every second), waits until it has been sent every event emitted so far, at most `timeout`,
  // so the page learns how the run ended. Returns at once when nobody reads.
  void awaitReader(std::chrono::milliseconds recent, std::chrono::milliseconds timeout);

 private:
  const std::string identity_;  // "role" and "index", as JSON members
  const size_t capacity_;
  std::shared_ptr<spdlog::logger> file_;
  mutable std::mutex mutex_;
  std::deque<std::string> recent_;
  std::uint64_t last_ = 0;  // sequence number of the newest event
  std::uint64_t delivered_ = 0;  // the newest sequence number a reader has been sent
  std::chrono::steady_clock::time_point deliveredAt_{};
  std::condition_variable deliveredChanged_;
  DownsampledSeries loss_;
  DownsampledSeries accuracy_;
};

// The events of an events.jsonl file from byte `from` on (those a process restarted there
// appended), in order. A line that is not a whole JSON object (the last one of a process killed
// while writing it) is skipped. Throws IoError when the file cannot be read.
std::vector<Poco::JSON::Object::Ptr> readEvents(const std::string& path, std::uint64_t from = 0);

}  // namespace pstrain::observe
