#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "pstrain/observe/events.hpp"
#include "pstrain/observe/history_recorder.hpp"
#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/ps/client_observer.hpp"
#include "pstrain/worker/trainer_observer.hpp"

namespace pstrain::app {

// A worker's reports, of its training loop and its ps client, onto its progress, meters, events
// and log lines (the progress line and step event every `logEverySteps` local steps), and onto the
// run's history when one is recorded.
class WorkerReporter : public ps::ClientObserver, public worker::TrainerObserver {
 public:
  WorkerReporter(int index, int logEverySteps, observe::Progress& progress,
                 observe::Meters& meters, observe::Events& events);

  // Records the client's pushes and answers into `history` too, from now on (before it trains).
  void recordHistory(observe::HistoryRecorder& history) { history_ = &history; }

  void connected(const net::Endpoint& ps, const net::Welcome& welcome) override;
  void lost(const net::Endpoint& ps, const std::string& reason) override;
  void reconnected(const net::Endpoint& ps, const net::Welcome& welcome,
                   std::uint64_t globalStep) override;
  void waiting(const net::Endpoint& ps, int attempt, const std::string& reason) override;
  void recut(const ps::RecutOutcome& outcome) override;
  void recutIncomplete(const std::string& reason) override;
  void pushSent(std::uint64_t generation, std::uint64_t pushNumber, std::uint64_t localStep,
                std::uint64_t basedOn) override;
  void answered(int psIndex, std::uint64_t generation, std::uint64_t pushNumber, bool applied,
                std::uint64_t globalStep) override;
  void goodbyeFailed(const net::Endpoint& ps, const std::string& reason) override;

  void divided(std::uint32_t rank, std::uint32_t workers, const worker::Slice& slice,
               size_t total) override;
  void training(const worker::TrainingPlan& plan) override;
  void pulled(double seconds) override;
  void exchanged(double seconds) override;
  void stepDone(std::uint64_t localStep, std::uint64_t globalStep, float loss) override;
  void evaluated(std::uint64_t localStep, std::uint64_t globalStep, double accuracy,
                 double takenAt) override;
  void trainingEnded(const worker::TrainingResult& result) override;
  void done(std::uint64_t globalStep) override;

 private:
  const int index_;
  const int logEverySteps_;
  observe::Progress& progress_;
  observe::Meters& meters_;
  observe::Events& events_;
  observe::HistoryRecorder* history_ = nullptr;
  std::mutex mutex_;
  std::vector<std::string> peers_;  // the ps connected to, in order
};

}  // namespace pstrain::app
