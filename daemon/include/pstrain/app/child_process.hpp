#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pstrain::app {

// A child process with its stdout and stderr in files. It receives SIGKILL if the thread that
// started it dies, so children never outlive a launcher killed without warning.
class ChildProcess {
 public:
  // The child has this process's environment, less the variables named in `unset`.
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdoutPath,
               const std::string& stderrPath, const std::vector<std::string>& unset = {});
  ~ChildProcess();

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The exit status once the child has ended (128 + signal when killed by one), else nothing.
  std::optional<int> poll();

  // The child's peak resident set size so far (VmHWM), or 0 when it has ended.
  std::uint64_t peakRssBytes() const;

  // SIGTERM, then SIGKILL if the child has not exited within `grace`.
  void stop(std::chrono::milliseconds grace);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace pstrain::app
