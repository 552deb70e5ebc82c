#include "pstrain/observe/events.hpp"

#include <Poco/JSON/Parser.h>
#include <Poco/JSONString.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "pstrain/common/error.hpp"
#include "pstrain/common/log.hpp"

namespace pstrain::observe {

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

void Events::emit(const Event& event) {
  std::string line = fmt::format("{{\"time\":{:.3f},{},\"event\":\"{}\"", event.time,
                                 identity_, event.name);
  for (const auto& field : event.fields) line += fmt::format(",\"{}\":{}", field.key, field.json);
  line += '}';
  if (!event.logger.empty()) {
    auto logger = log::logger(event.logger);
    for (const auto& text : event.lines) logger->log(event.level, "{}", text);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_) file_->log(event.urgent ? spdlog::level::warn : spdlog::level::info, "{}", line);
  recent_.push_back(std::move(line));
  if (recent_.size() > capacity_) recent_.pop_front();
  ++last_;
  if (event.curve != Event::Curve::kNone && std::isfinite(event.curveValue)) {
    auto& series = event.curve == Event::Curve::kLoss ? loss_ : accuracy_;
    series.add({event.curveStep, event.curveTime, event.curveValue});
  }
}

std::string Events::since(std::uint64_t after, std::uint64_t* next) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (next) *next = last_;
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

void Events::delivered(std::uint64_t next) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    delivered_ = std::max(delivered_, next);
    deliveredAt_ = std::chrono::steady_clock::now();
  }
  deliveredChanged_.notify_all();
}

void Events::awaitReader(std::chrono::milliseconds recent, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (delivered_ == 0 || std::chrono::steady_clock::now() - deliveredAt_ > recent) return;
  const std::uint64_t newest = last_;
  deliveredChanged_.wait_for(lock, timeout, [&] { return delivered_ >= newest; });
}

std::vector<Poco::JSON::Object::Ptr> readEvents(const std::string& path, std::uint64_t from) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read " + path);
  in.seekg(std::streamoff(from));
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
