#include <fmt/format.h>

#include "pstrain/observe/event.hpp"

// The events of a worker's ps client (ps::ClientObserver's, through app::WorkerReporter): its
// links to the ps, and worker 0's re-cuts.
namespace pstrain::observe::event {
namespace {

constexpr auto kLineInfo = spdlog::level::info;
constexpr auto kLineWarn = spdlog::level::warn;

}  // namespace

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

}  // namespace pstrain::observe::event
