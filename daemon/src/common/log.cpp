#include "pstrain/common/log.hpp"

#include <fcntl.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "pstrain/common/error.hpp"

namespace pstrain::log {
namespace {

std::mutex mutex;
std::vector<spdlog::sink_ptr> sinks;

void useSinks(std::vector<spdlog::sink_ptr> newSinks) {
  std::lock_guard<std::mutex> lock(mutex);
  sinks = std::move(newSinks);
  for (auto& sink : sinks) sink->set_pattern("[%Y-%m-%d %H:%M:%S.%f] [%n] %v");
  spdlog::drop_all();
  // Progress lines reach the file within a second; warnings and errors at once, and
  // everything on exit (flush()). A write per line cost ~7% of throughput at one line a step.
  spdlog::flush_every(std::chrono::seconds(1));
}

// A file sink that hands the kernel whole lines only: lines are buffered and written out with
// one write() each time the buffer fills or on flush, so a process killed at any moment (SIGKILL,
// the OOM killer) leaves a file of complete lines, missing at most its last second. (A stdio
// buffer, as in spdlog's file sink, is written out wherever it fills, mid-line.)
class WholeLinesFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit WholeLinesFileSink(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw IoError("cannot open " + path + ": " + std::strerror(errno));
  }
  ~WholeLinesFileSink() override {
    writeOut();
    ::close(fd_);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    pending_.append(line.data(), line.size());
    if (pending_.size() >= kBufferBytes) writeOut();
  }
  void flush_() override { writeOut(); }

 private:
  static constexpr size_t kBufferBytes = 64 * 1024;

  void writeOut() {
    if (cutShort_) pending_.insert(0, 1, '\n');  // the next lines start lines of their own
    size_t written = 0;
    while (written < pending_.size()) {
      ssize_t n = ::write(fd_, pending_.data() + written, pending_.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // a full disk: these lines are lost, the next ones are tried again
      written += size_t(n);
    }
    if (written > 0) cutShort_ = pending_[written - 1] != '\n';
    pending_.clear();
  }

  const int fd_;
  std::string pending_;
  bool cutShort_ = false;  // a full disk ended the file mid-line
};

// A file left with an unfinished last line (a host that crashed mid-write, another writer): ends
// it, so that the first line of this process starts a line of its own.
void endPartialLine(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!file || !file.seekg(-1, std::ios::end)) return;  // none, or empty
  if (file.get() == '\n') return;
  file.seekp(0, std::ios::end);
  file.put('\n');
}

}  // namespace

void init(const std::string& logDir, bool toStdout) {
  std::vector<spdlog::sink_ptr> newSinks;
  try {
    std::filesystem::create_directories(logDir);
    newSinks.push_back(
        std::make_shared<WholeLinesFileSink>(logDir + "/deploy.log"));
  } catch (const std::exception& e) {
    throw IoError("cannot write the log file in " + logDir + ": " + e.what());
  }
  if (toStdout) newSinks.push_back(std::make_shared<spdlog::sinks::stdout_sink_mt>());
  useSinks(std::move(newSinks));
}

void initConsole() { useSinks({std::make_shared<spdlog::sinks::stdout_sink_mt>()}); }

std::shared_ptr<spdlog::logger> logger(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = spdlog::get(name)) return existing;
  auto created = std::make_shared<spdlog::logger>(name, sinks.begin(), sinks.end());
  created->flush_on(spdlog::level::warn);
  spdlog::register_logger(created);
  return created;
}

std::shared_ptr<spdlog::logger> recordFile(const std::string& path) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  try {
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir);
    endPartialLine(path);
    sink = std::make_shared<WholeLinesFileSink>(path);
  } catch (const std::exception& e) {
    throw IoError("cannot write " + path + ": " + e.what());
  }
  sink->set_pattern("%v");
  std::lock_guard<std::mutex> lock(mutex);
  // Registered, so the periodic flush and flush() reach it; named by its file.
  spdlog::drop(path);
  auto created = std::make_shared<spdlog::logger>(path, sink);
  created->flush_on(spdlog::level::warn);
  spdlog::register_logger(created);
  return created;
}

void flush() {
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
}

}  // namespace pstrain::log
