#include <fmt/format.h>

#include "pstrain/observe/event.hpp"

// The events of a ps (ps::ServerObserver's and net::SessionObserver's, through app::PsReporter):
// its workers and connections, its checkpoints, and its part in re-cuts.
namespace pstrain::observe::event {

Event workerConnected(int ps, std::uint32_t worker, const std::string& address,
                      std::uint64_t globalStep) {
  return std::move(Event("connected")
                       .text("peer", workerPeer(worker))
                       .text("address", address)
                       .integer("step", globalStep)
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: worker {} connected from {} (global step {})", ps,
                                         worker, address, globalStep)));
}

Event loaded(int ps, std::uint64_t offset, std::uint64_t count, std::uint64_t parameterCount,
             const std::string& description) {
  return std::move(Event("loaded")
                       .integer("offset", offset)
                       .integer("count", count)
                       .integer("parameters", parameterCount)
                       .text("description", description)
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: serving parameters [{}, {}) of {} ({})", ps,
                                         offset, offset + count, parameterCount, description)));
}

Event checkpointIgnored(int ps, const std::string& path, std::uint64_t otherRun,
                        std::uint64_t runId) {
  return std::move(Event("checkpoint_ignored")
                       .text("path", path)
                       .text("other_run", std::to_string(otherRun))
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: {} belongs to another run ({}); starting run {}",
                                         ps, path, otherRun, runId)));
}

Event checkpointFailed(int ps, const std::string& what) {
  return std::move(Event("checkpoint_failed")
                       .text("reason", what)
                       .line("ps", kLineError, fmt::format("PS {}: {}", ps, what)));
}

Event rejected(const std::string& address, const std::string& reason) {
  return std::move(
      Event("rejected")
          .text("address", address)
          .text("reason", reason)
          .line("ps", kLineWarn, fmt::format("closing connection from {}: {}", address, reason)));
}

Event sessionEnded(const std::string& peer, const std::string& reason, bool failed) {
  return std::move(Event("session_ended")
                       .text("peer", peer)
                       .text("reason", reason)
                       .flag("failed", failed)
                       .line("ps", failed ? kLineWarn : kLineInfo,
                             fmt::format("connection from {} {}: {}", peer,
                                         failed ? "failed" : "ended", reason)));
}

Event listenerFailed(const std::string& what) {
  return std::move(Event("listener_failed").text("what", what).line("ps", kLineWarn, what));
}

Event finished(int ps, std::uint32_t worker, std::uint64_t localSteps) {
  return std::move(Event("finished")
                       .text("peer", workerPeer(worker))
                       .integer("local_steps", localSteps)
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: worker {} finished after {} local steps", ps,
                                         worker, localSteps)));
}

Event checkpoint(int ps, std::uint64_t globalStep, const std::string& path) {
  return std::move(Event("checkpoint")
                       .integer("step", globalStep)
                       .text("path", path)
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: checkpoint at global step {} in {}", ps,
                                         globalStep, path)));
}

Event restored(int ps, std::uint64_t globalStep, const std::string& path, bool completed) {
  return std::move(
      Event("restored")
          .integer("step", globalStep)
          .text("path", path)
          .flag("completed", completed)
          .line("ps", kLineInfo,
                fmt::format("PS {}: restored {} at global step {}{}", ps, path, globalStep,
                            completed ? ": the run has completed, training stays done" : "")));
}

Event recovered(int ps, std::uint64_t fromStep, std::uint64_t globalStep,
                std::uint32_t worker) {
  const auto line =
      fromStep == 0
          ? fmt::format("PS {}: no checkpoint, but {} held this shard at global step {}: "
                        "training goes on from its copy (Adam's moments start again from zero)",
                        ps, workerPeer(worker), globalStep)
          : fmt::format("PS {}: its checkpoint was of global step {}, but {} held this shard at "
                        "global step {}: training goes on from its copy (Adam's moments as of "
                        "step {})",
                        ps, fromStep, workerPeer(worker), globalStep, fromStep);
  return std::move(Event("recovered")
                       .integer("from_step", fromStep)
                       .integer("step", globalStep)
                       .text("peer", workerPeer(worker))
                       .line("ps", kLineWarn, line));
}

Event cutFrozen(int ps, std::uint64_t generation, std::uint64_t globalStep) {
  return std::move(Event("cut_frozen")
                       .integer("generation", generation)
                       .integer("step", globalStep)
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: applies no more pushes at global step {}: "
                                         "worker 0 re-cuts the ps (generation {})",
                                         ps, globalStep, generation)));
}

Event cutServed(int ps, std::uint64_t generation, int psCount, int index, std::uint64_t offset,
                std::uint64_t count, std::uint64_t globalStep) {
  return std::move(
      Event("cut")
          .integer("generation", generation)
          .integer("ps_count", std::uint64_t(psCount))
          .integer("cut_index", std::uint64_t(index))
          .integer("offset", offset)
          .integer("count", count)
          .integer("step", globalStep)
          .line("ps", kLineInfo,
                count == 0 ? fmt::format("PS {}: out of the run since its re-cut to {} ps "
                                         "(generation {})",
                                         ps, psCount, generation)
                           : fmt::format("PS {}: serves parameters [{}, {}) as ps {} of {} "
                                         "(generation {}) from global step {}",
                                         ps, offset, offset + count, index, psCount, generation,
                                         globalStep)));
}

Event cutThawed(int ps, std::uint64_t generation, std::uint64_t globalStep) {
  return std::move(Event("cut_thawed")
                       .integer("generation", generation)
                       .integer("step", globalStep)
                       .line("ps", kLineWarn,
                             fmt::format("PS {}: the re-cut did not come: serves generation {} "
                                         "again from global step {}",
                                         ps, generation, globalStep)));
}

Event averaged(int ps, std::uint64_t globalStep, int averaged, int workers,
               std::int64_t timeoutMs) {
  return std::move(
      Event("averaged")
          .integer("step", globalStep)
          .integer("averaged", std::uint64_t(averaged))
          .integer("workers", std::uint64_t(workers))
          .integer("timeout_ms", std::uint64_t(timeoutMs))
          .line("ps", kLineWarn,
                fmt::format("PS {}: global step {} averaged {} of {} workers' gradients: the "
                            "others did not come within {} ms",
                            ps, globalStep, averaged, workers, timeoutMs)));
}

Event staleness(int ps, std::uint64_t pushes, double mean, double p99) {
  return std::move(
      Event("staleness")
          .integer("pushes", pushes)
          .number("mean", mean)
          .number("p99", p99)
          .line("ps", kLineInfo,
                fmt::format("PS {}: a push's gradient was {:.2f} global steps old on average "
                            "(99% within {})",
                            ps, mean, p99)));
}

}  // namespace pstrain::observe::event
