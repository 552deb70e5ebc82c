#include "pstrain/observe/events.hpp"

#include <Poco/JSON/Parser.h>
#include <Poco/JSONString.h>
#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"
#include "pstrain/common/timestamp.hpp"

namespace pstrain::observe {

std::string stateName(State state) {
  switch (state) {
    case State::kWaiting: return "waiting";
    case State::kTraining: return "training";
    case State::kCompleted: return "completed";
  }
  return "unknown";
}

Events::Events(std::string role, int index, const std::string& path, size_t capacity,
               size_t curvePoints)
    : identity_(fmt::format("\"role\":{},\"index\":{}", Poco::toJSON(role), index)),
      capacity_(capacity),
      file_(path.empty() ? nullptr : log::recordFile(path)),
      loss_(curvePoints),
      accuracy_(curvePoints) {}

Events::~Events() {
  if (!file_) return;
  file_->flush();
  spdlog::drop(file_->name());
}

Events::Field Events::number(const char* key, double value) {
  // JSON has no NaN: a value not known yet is null.
  return {key, std::isfinite(value) ? fmt::format("{}", value) : "null"};
}

Events::Field Events::integer(const char* key, std::uint64_t value) {
  return {key, std::to_string(value)};
}

Events::Field Events::text(const char* key, const std::string& value) {
  return {key, Poco::toJSON(value)};
}

void Events::record(const char* event, std::initializer_list<Field> fields, bool urgent,
                    std::optional<CurvePoint> point) {
  const double time = unixTime();
  std::string line = fmt::format("{{\"time\":{:.3f},{},\"event\":\"{}\"", time, identity_,
                                 event);
  for (const auto& field : fields) line += fmt::format(",\"{}\":{}", field.key, field.json);
  line += '}';
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_) file_->log(urgent ? spdlog::level::warn : spdlog::level::info, "{}", line);
  recent_.push_back(std::move(line));
  if (recent_.size() > capacity_) recent_.pop_front();
  ++last_;
  if (point && std::isfinite(point->value)) {
    (this->*(point->series)).add({point->step, point->time.value_or(time), point->value});
  }
}

void Events::started(const std::string& version, long pid, const std::string& blasCore,
                     int blasThreads) {
  record("started", {text("version", version), integer("pid", std::uint64_t(pid)),
                     text("blasCore", blasCore),
                     integer("blasThreads", std::uint64_t(blasThreads))});
}

void Events::state(State state) { record("state", {text("state", stateName(state))}); }

void Events::listening(int port) { record("listening", {integer("port", std::uint64_t(port))}); }

void Events::step(std::uint64_t globalStep, float loss, std::uint32_t worker,
                  std::uint64_t localStep, double staleness) {
  record("step",
         {integer("step", globalStep), number("loss", double(loss)), integer("worker", worker),
          integer("localStep", localStep), number("staleness", staleness)},
         false, CurvePoint{&Events::loss_, globalStep, double(loss)});
}

void Events::staleness(std::uint64_t pushes, double mean, double p99) {
  record("staleness", {integer("pushes", pushes), number("mean", mean), number("p99", p99)});
}

void Events::workerStep(std::uint64_t localStep, std::uint64_t globalStep, float loss) {
  record("step",
         {integer("localStep", localStep), integer("step", globalStep),
          number("loss", double(loss))},
         false, CurvePoint{&Events::loss_, globalStep, double(loss)});
}

void Events::accuracy(std::uint64_t localStep, std::uint64_t globalStep, double accuracy,
                      double takenAt) {
  record("accuracy",
         {integer("localStep", localStep), integer("step", globalStep),
          number("accuracy", accuracy), number("takenAt", takenAt)},
         true, CurvePoint{&Events::accuracy_, globalStep, accuracy, takenAt});
}

void Events::averaged(std::uint64_t globalStep, int averaged, int workers) {
  record("averaged", {integer("step", globalStep), integer("averaged", std::uint64_t(averaged)),
                      integer("workers", std::uint64_t(workers))});
}

void Events::divided(std::uint32_t rank, std::uint32_t workers, std::uint64_t first,
                     std::uint64_t end) {
  record("divided", {integer("rank", rank), integer("workers", workers), integer("first", first),
                     integer("end", end)});
}

void Events::connected(const std::string& peer, std::uint64_t globalStep) {
  record("connected", {text("peer", peer), integer("step", globalStep)});
}

void Events::lost(const std::string& peer, const std::string& reason) {
  record("lost", {text("peer", peer), text("reason", reason)});
}

void Events::reconnected(const std::string& peer, std::uint64_t globalStep) {
  record("reconnected", {text("peer", peer), integer("step", globalStep)});
}

void Events::finished(const std::string& peer, std::uint64_t localSteps) {
  record("finished", {text("peer", peer), integer("localSteps", localSteps)});
}

void Events::checkpoint(std::uint64_t globalStep, const std::string& path) {
  record("checkpoint", {integer("step", globalStep), text("path", path)});
}

void Events::restored(std::uint64_t globalStep, const std::string& path, bool completed) {
  record("restored", {integer("step", globalStep), text("path", path),
                      {"completed", completed ? "true" : "false"}});
}

void Events::recovered(std::uint64_t globalStep, const std::string& peer) {
  record("recovered", {integer("step", globalStep), text("peer", peer)});
}

void Events::alreadyCompleted(std::uint64_t globalStep) {
  record("alreadyCompleted", {integer("step", globalStep)});
}

void Events::done(std::uint64_t globalStep, double elapsedSeconds,
                  std::optional<double> accuracy) {
  if (accuracy) {
    record("done", {integer("step", globalStep), number("elapsedSeconds", elapsedSeconds),
                    number("accuracy", *accuracy)});
  } else {
    record("done", {integer("step", globalStep), number("elapsedSeconds", elapsedSeconds)});
  }
}

void Events::restarted(const std::string& child, int status, int restart) {
  record("restarted", {text("child", child), integer("status", std::uint64_t(status)),
                       integer("restart", std::uint64_t(restart))});
}

void Events::stopped(const std::string& signal) { record("stopped", {text("signal", signal)}); }

std::string Events::since(std::uint64_t after) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (after > last_) after = 0;  // asked of an earlier process that had more: all we have
  const std::uint64_t first = last_ - recent_.size() + 1;  // sequence number of recent_[0]
  std::string body = fmt::format("{{\"next\":{},\"events\":[", last_);
  for (std::uint64_t seq = std::max(after + 1, first); seq <= last_; ++seq) {
    if (body.back() != '[') body += ',';
    body += recent_[size_t(seq - first)];
  }
  return body + "]}";
}

std::string Events::history() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fmt::format("{{\"next\":{},\"loss\":{},\"accuracy\":{}}}", last_, loss_.json(),
                     accuracy_.json());
}

std::vector<Poco::JSON::Object::Ptr> readEvents(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read " + path);
  std::vector<Poco::JSON::Object::Ptr> events;
  for (std::string line; std::getline(in, line);) {
    try {
      auto parsed = Poco::JSON::Parser().parse(line);
      if (parsed.type() == typeid(Poco::JSON::Object::Ptr)) {
        events.push_back(parsed.extract<Poco::JSON::Object::Ptr>());
      }
    } catch (const Poco::Exception&) {
      // a partial line: skipped
    }
  }
  return events;
}

}  // namespace pstrain::observe
