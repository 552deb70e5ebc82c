#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "pstrain/net/session.hpp"
#include "pstrain/observe/events.hpp"
#include "pstrain/observe/history_recorder.hpp"
#include "pstrain/observe/meters.hpp"
#include "pstrain/observe/progress.hpp"
#include "pstrain/observe/worker_roster.hpp"
#include "pstrain/ps/server_observer.hpp"

namespace pstrain::app {

// A ps's reports onto its progress, meters, roster of workers, events and log lines (the
// progress line and step event every `logEverySteps` global steps and at the last), and onto the
// run's history when one is recorded.
class PsReporter : public ps::ServerObserver, public net::SessionObserver {
 public:
  PsReporter(int index, int logEverySteps, observe::Progress& progress, observe::Meters& meters,
             observe::WorkerRoster& workers, observe::Events& events);

  // Records the ps's operations into `history` too, from now on (before the ps is made).
  void recordHistory(observe::HistoryRecorder& history) { history_ = &history; }

  void restored(const SliceValues& slice, std::uint64_t globalStep, const std::string& path,
                bool completed) override;
  void shardRecovered(std::uint32_t worker, const SliceValues& slice, std::uint64_t fromStep,
                      std::uint64_t globalStep,
                      bool completed) override;
  void shardCopyIgnored(std::uint32_t worker, std::uint64_t copyStep,
                        std::uint64_t globalStep) override;
  void cutFrozen(std::uint64_t generation, const SliceValues& frozen,
                 std::uint64_t globalStep) override;
  void cutInstalled(const ps::CutPosition& cut, std::uint64_t globalStep,
                    std::uint64_t checksum) override;
  void cutThawed(const SliceValues& slice, std::uint64_t globalStep) override;
  void checkpointWritten(const SliceValues& slice, std::uint64_t globalStep,
                         const std::string& path) override;
  void serving(const ps::CutPosition& cut, std::uint64_t globalStep, bool completed) override;
  void workerArrived(std::uint32_t worker, const std::string& address) override;
  void workerWaitsForChief(std::uint32_t worker) override;
  void workerJoined(std::uint32_t worker, const std::string& address,
                    std::uint64_t globalStep) override;
  void workerLeft(std::uint32_t worker) override;
  void pulled(std::uint64_t globalStep, double seconds) override;
  void pushed(std::uint32_t worker, std::uint64_t localStep, double seconds) override;
  void pushApplied(const AppliedPush& push) override;
  void pushRefused(std::uint32_t worker, std::uint64_t incarnation, std::uint64_t pushNumber,
                   std::uint64_t generation, std::uint64_t globalStep, Refusal why) override;
  void stepApplied(const Step& step) override;
  void trainingCompleted(std::uint64_t globalStep, double elapsedSeconds) override;
  void workerFinished(std::uint32_t worker, std::uint64_t localSteps) override;
  void loaded(const ps::ShardRange& range, size_t parameterCount,
              const std::string& description) override;
  void checkpointIgnored(const std::string& path, std::uint64_t otherRun,
                         std::uint64_t runId) override;
  void checkpointFailed(const std::string& what) override;
  void rejected(const std::string& address, const std::string& reason) override;
  void sessionEnded(const std::string& peer, const std::string& reason, bool failed) override;
  void listenerFailed(const std::string& what) override;

 private:
  void record(const observe::HistoryRecord& record) {
    if (history_) history_->record(record);
  }
  // A record of `slice`'s values: `record` with its offset, count and checksum.
  void record(observe::HistoryRecord record, const SliceValues& slice) {
    record.offset = slice.offset;
    record.count = slice.count;
    record.checksum = slice.checksum;
    this->record(record);
  }

  const int index_;
  const int logEverySteps_;
  observe::Progress& progress_;
  observe::Meters& meters_;
  observe::WorkerRoster& workers_;
  observe::Events& events_;
  observe::HistoryRecorder* history_ = nullptr;
  std::mutex mutex_;
  std::map<std::uint32_t, std::string> workerAddresses_;  // of each worker's latest connection
  // The staleness of the pushes applied since the last step event, for its mean.
  std::uint64_t stalenessSum_ = 0;
  std::uint64_t stalenessCount_ = 0;
};

}  // namespace pstrain::app
