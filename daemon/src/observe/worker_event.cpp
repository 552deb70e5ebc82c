#include <fmt/format.h>

#include "pstrain/observe/event.hpp"

// The events of a worker (ps::ClientObserver's and worker::TrainerObserver's, through
// app::WorkerReporter): its links to the ps, worker 0's re-cuts, and its training.
namespace pstrain::observe::event {
Event psConnected(int worker, const std::string& endpoint, std::uint64_t offset,
                  std::uint64_t count, std::uint64_t globalStep) {
  return std::move(
      Event("connected")
          .text("peer", psPeer(endpoint))
          .integer("offset", offset)
          .integer("count", count)
          .integer("step", globalStep)
          .line("worker", kLineInfo,
                fmt::format("Worker {}: connected to ps {} (parameters [{}, {}), global step {})",
                            worker, endpoint, offset, offset + count, globalStep)));
}

Event lost(int worker, const std::string& endpoint, const std::string& reason) {
  return std::move(Event("lost")
                       .text("peer", psPeer(endpoint))
                       .text("reason", reason)
                       .line("worker", kLineWarn,
                             fmt::format("Worker {}: lost ps {} ({}); reconnecting", worker,
                                         endpoint, reason)));
}

Event reconnected(int worker, const std::string& endpoint, std::uint64_t globalStep) {
  return std::move(Event("reconnected")
                       .text("peer", psPeer(endpoint))
                       .integer("step", globalStep)
                       .line("worker", kLineInfo,
                             fmt::format("Worker {}: reconnected to ps {} at global step {}",
                                         worker, endpoint, globalStep)));
}

Event goodbyeFailed(int worker, const std::string& endpoint, const std::string& reason) {
  return std::move(Event("goodbye_failed")
                       .text("peer", psPeer(endpoint))
                       .text("reason", reason)
                       .line("worker", kLineInfo,
                             fmt::format("Worker {}: could not say goodbye to ps {}: {}", worker,
                                         endpoint, reason)));
}

Event recut(std::uint64_t generation, int fromPs, int toPs, std::uint64_t globalStep,
            std::uint64_t movedState, std::uint64_t lostState, const std::string& unreached) {
  return std::move(
      Event("recut")
          .integer("generation", generation)
          .integer("from_ps", std::uint64_t(fromPs))
          .integer("to_ps", std::uint64_t(toPs))
          .integer("step", globalStep)
          .integer("moved_state", movedState)
          .integer("lost_state", lostState)
          .text("unreached", unreached)
          .line("worker", lostState == 0 ? kLineInfo : kLineWarn,
                fmt::format("Worker 0: re-cut the parameters from {} to {} ps (generation {}) at "
                            "global step {}{}",
                            fromPs, toPs, generation, globalStep,
                            lostState == 0
                                ? std::string(": the optimizer state moved with its parameters")
                                : fmt::format(": the optimizer state of {} parameters starts "
                                              "again from zero ({} could not be reached)",
                                              lostState, unreached))));
}

Event recutIncomplete(const std::string& reason) {
  return std::move(Event("recut_incomplete")
                       .text("reason", reason)
                       .line("worker", kLineWarn,
                             fmt::format("Worker 0: the re-cut did not complete: {}", reason)));
}

Event trainingPlan(int worker, std::uint64_t examples, int batch, std::uint64_t trainSteps,
                   long factoredLayers, size_t layers) {
  const std::string factored =
      factoredLayers == 0 ? ""
                          : fmt::format("; the weight gradients of {} of {} layers go to the ps "
                                        "as their factors",
                                        factoredLayers, layers);
  return std::move(Event("plan")
                       .integer("examples", examples)
                       .integer("batch", std::uint64_t(batch))
                       .integer("train_steps", trainSteps)
                       .integer("factored_layers", std::uint64_t(factoredLayers))
                       .line("worker", kLineInfo,
                             fmt::format("Worker {}: training on {} examples, batch {}, until "
                                         "global step {}{}",
                                         worker, examples, batch, trainSteps, factored)));
}


Event stepCosts(int worker, double computeMs, double communicationMs, double waitingMs,
                double bytes) {
  return std::move(Event("step_costs")
                       .number("compute_ms", computeMs)
                       .number("communication_ms", communicationMs)
                       .number("waiting_ms", waitingMs)
                       .number("bytes", bytes)
                       .line("worker", kLineInfo,
                             fmt::format("Worker {}: per step {:.3f} ms computing, {:.3f} ms "
                                         "communicating, {:.3f} ms waiting for the ps, {:.0f} "
                                         "bytes exchanged",
                                         worker, computeMs, communicationMs, waitingMs, bytes)));
}


Event divided(int worker, std::uint32_t rank, std::uint32_t workers, std::uint64_t first,
              std::uint64_t end, std::uint64_t total) {
  return std::move(
      Event("divided")
          .integer("rank", rank)
          .integer("workers", workers)
          .integer("first", first)
          .integer("end", end)
          .integer("total", total)
          .line("worker", kLineInfo,
                fmt::format("Worker {}: training on examples [{}, {}) of {}: part {} of {}, one "
                            "for each worker connected",
                            worker, first, end, total, rank, workers)));
}

}  // namespace pstrain::observe::event
