#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace pstrain::log {

// Sends every module's log lines to `<logDir>/deploy.log` (created if missing) and,
// when `toStdout` is set, to stdout. Call once, before the first logger() call.
void init(const std::string& logDir, bool toStdout);

// Logs to stdout only: for commands that write no deploy.log (the launcher).
void initConsole();

// The named logger of one module ("ps", "worker", ...), sharing the sinks set by init().
std::shared_ptr<spdlog::logger> logger(const std::string& name);

// A logger that writes each message as it is, one a line, to `path` (appended), flushed as
// deploy.log is: messages below warn level within a second, the others at once, all by flush().
std::shared_ptr<spdlog::logger> recordFile(const std::string& path);

// Writes buffered lines out; called before the process exits or idles.
void flush();

}  // namespace pstrain::log
