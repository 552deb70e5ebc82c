#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/app/child_process.hpp"

namespace pstrain::app::local {

// How to start one ps or worker of the cluster.
struct ChildSpec {
  std::string name;  // "ps-0", "worker-1": also the name of its log dir
  std::vector<std::string> argv;
  std::string dir;   // its log dir
  int httpPort = 0;  // where it answers /status
};

// One ps or worker of the cluster, as a StatefulSet's pod: every start has the same name, ports
// and log dir. Its process is the launcher's to start and stop; the Supervisor decides when.
class Child {
 public:
  explicit Child(ChildSpec spec, bool readsCopy = false);

  const ChildSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  bool isWorker() const { return spec_.name.rfind("worker-", 0) == 0; }
  bool isChief() const { return spec_.name == "worker-0"; }
  // Waits for the plain copy of the data set before its first start.
  bool readsCopy() const { return readsCopy_; }
  // Reads the data set itself: its copy could not be written.
  void readOriginal();

  // Starts a process, in place of one that has exited.
  void start();
  // Whether it has a process, running or exited: none before its first start and once removed.
  bool hasProcess() const { return process_ != nullptr; }
  // Its process's exit status once it has ended (128 + signal when killed by one).
  std::optional<int> poll() { return process_ ? process_->poll() : std::nullopt; }
  std::uint64_t peakRssBytes() const { return process_ ? process_->peakRssBytes() : 0; }
  // SIGTERM without waiting, so that every child stops at once; then finishStop() waits.
  void askToStop();
  // Waits up to 5 s for the process to exit (then SIGKILL); keeps it, exited.
  void finishStop();
  // Stops the process and forgets it: the child is out of the cluster, or waits to be replaced.
  void remove();
  // The last line its process wrote to stderr: why it exited.
  std::string lastErrorLine() const;

 private:
  ChildSpec spec_;
  bool readsCopy_;
  int starts_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace pstrain::app::local
