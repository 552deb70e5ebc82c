#include "pstrain/app/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "pstrain/common/error.hpp"

namespace pstrain::app {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& stdoutPath,
                           const std::string& stderrPath, const std::vector<std::string>& unset) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> environment;
  for (char** variable = environ; *variable; ++variable) {
    const std::string_view entry(*variable);
    const bool dropped = std::any_of(unset.begin(), unset.end(), [&](const std::string& name) {
      return entry.size() > name.size() && entry.substr(0, name.size()) == name &&
             entry[name.size()] == '=';
    });
    if (!dropped) environment.push_back(*variable);
  }
  environment.push_back(nullptr);
  // Appending: what an earlier run of the same child wrote stays readable.
  int out = ::open(stdoutPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int err = ::open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) {
    throw IoError("cannot create " + stderrPath + ": " + std::strerror(errno));
  }
  sigset_t none;
  sigemptyset(&none);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // This process's handlers are the parent's until exec: a SIGTERM that comes now (a child
    // stopped as soon as it is started) would be forwarded through the parent's signal pipe and
    // stop the parent. Default actions first, then the signals the parent blocks.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &fallback, nullptr);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execve(args[0], args.data(), environment.data());
    ::_exit(127);
  }
  ::close(out);
  ::close(err);
  if (pid_ < 0) throw IoError(std::string("cannot start a process: ") + std::strerror(errno));
}

ChildProcess::~ChildProcess() { stop(std::chrono::milliseconds(2000)); }

std::optional<int> ChildProcess::poll() {
  if (status_) return status_;
  int raw = 0;
  if (::waitpid(pid_, &raw, WNOHANG) == pid_) {
    status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  }
  return status_;
}

std::uint64_t ChildProcess::peakRssBytes() const {
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // in kB
  }
  return 0;
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (poll()) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!poll() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!poll()) {
    ::kill(pid_, SIGKILL);
    int raw = 0;
    ::waitpid(pid_, &raw, 0);
    status_ = 128 + SIGKILL;
  }
}

}  // namespace pstrain::app
