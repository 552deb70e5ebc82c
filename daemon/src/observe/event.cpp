#include "pstrain/observe/event.hpp"

#include <Poco/JSONString.h>
#include <fmt/format.h>

#include <cmath>

#include "pstrain/common/timestamp.hpp"

namespace pstrain::observe {

std::string stateName(State state) {
  switch (state) {
    case State::kWaiting: return "waiting";
    case State::kTraining: return "training";
    case State::kCompleted: return "completed";
  }
  return "unknown";
}

Event::Event(std::string eventName) : name(std::move(eventName)), time(unixTime()) {}

Event& Event::number(const std::string& key, double value) {
  // JSON has no NaN: a value not known yet is null.
  fields.push_back({key, std::isfinite(value) ? fmt::format("{}", value) : "null"});
  return *this;
}

Event& Event::integer(const std::string& key, std::uint64_t value) {
  fields.push_back({key, std::to_string(value)});
  return *this;
}

Event& Event::text(const std::string& key, const std::string& value) {
  fields.push_back({key, Poco::toJSON(value)});
  return *this;
}

Event& Event::flag(const std::string& key, bool value) {
  fields.push_back({key, value ? "true" : "false"});
  return *this;
}

Event& Event::line(const std::string& loggerName, spdlog::level::level_enum lineLevel,
                   std::string text) {
  logger = loggerName;
  level = lineLevel;
  lines.push_back(std::move(text));
  return *this;
}

std::string psPeer(const std::string& endpoint) { return "ps " + endpoint; }

std::string workerPeer(std::uint32_t worker) { return "worker " + std::to_string(worker); }

namespace event {
namespace {

// The one field set of a step, a ps's or a worker's.
Event stepEvent(std::uint64_t globalStep, std::uint64_t localStep, std::uint32_t worker, float loss,
           double staleness) {
  Event e("step");
  e.integer("step", globalStep)
      .integer("local_step", localStep)
      .integer("worker", worker)
      .number("loss", double(loss))
      .number("staleness", staleness);
  e.urgent = false;
  e.curve = Event::Curve::kLoss;
  e.curveStep = globalStep;
  e.curveValue = double(loss);
  e.curveTime = e.time;
  return e;
}

Event doneEvent(std::uint64_t globalStep, double elapsedSeconds, std::optional<double> accuracy) {
  Event e("done");
  e.integer("step", globalStep).number("elapsed_s", elapsedSeconds);
  if (accuracy) e.number("accuracy", *accuracy);
  return e;
}

}  // namespace

Event started(const std::string& version, const std::string& role, int index, int psCount,
              const std::string& mode, const std::string& psHosts, const std::string& blasCore,
              const std::string& blasKernels, int blasThreads, long pid,
              const std::string& pushEncoding, const std::string& pullEncoding) {
  Event e("started");
  e.text("version", version)
      .integer("pid", std::uint64_t(pid))
      .text("mode", mode)
      .text("ps_hosts", psHosts)
      .text("blas_core", blasCore)
      .integer("blas_threads", std::uint64_t(blasThreads))
      .text("push_encoding", pushEncoding)
      .text("pull_encoding", pullEncoding);
  return e.line("app", kLineInfo,
                fmt::format("pstrain {}: {} {} of a {} run of {} ps; ps: {}; wire: {} pushes, {} "
                            "answers; BLAS kernels: {}; BLAS threads: {}; pid {}",
                            version, role, index, mode, psCount, psHosts, pushEncoding,
                            pullEncoding, blasKernels, blasThreads, pid));
}

Event state(State state) { return std::move(Event("state").text("state", stateName(state))); }

Event listening(int ps, int port) {
  return std::move(Event("listening")
                       .integer("port", std::uint64_t(port))
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: listening on port {}", ps, port)));
}

Event psStep(int ps, std::uint64_t globalStep, std::uint32_t worker, std::uint64_t localStep,
             float loss, double staleness) {
  return std::move(stepEvent(globalStep, localStep, worker, loss, staleness)
                       .line("ps", kLineInfo,
                             fmt::format("PS {}: global step {} done (worker {}, local step {}, "
                                         "loss {:.4f})",
                                         ps, globalStep, worker, localStep, loss)));
}

Event workerStep(int worker, std::uint64_t globalStep, std::uint64_t localStep, float loss) {
  return std::move(
      stepEvent(globalStep, localStep, std::uint32_t(worker), loss, std::nan(""))
          .line("worker", kLineInfo,
                fmt::format("Worker {}: training step {} done (global step: {})", worker,
                            localStep, globalStep)));
}

Event accuracy(std::uint64_t localStep, std::uint64_t globalStep, double accuracy,
               double takenAt) {
  Event e("accuracy");
  e.integer("step", globalStep)
      .integer("local_step", localStep)
      .number("accuracy", accuracy)
      .number("taken_at", takenAt)
      .line("worker", kLineInfo,
            fmt::format("Accuracy at local step {}: {:.4f}", localStep, accuracy));
  e.curve = Event::Curve::kAccuracy;
  e.curveStep = globalStep;
  e.curveValue = accuracy;
  e.curveTime = takenAt;
  return e;
}

namespace {

// A wait for `peer` at `endpoint`, logged by `logger`.
Event waitingFor(const std::string& peer, const char* logger, const std::string& endpoint,
                 int attempt, const std::string& reason) {
  return std::move(Event("waiting")
                       .text("peer", peer)
                       .integer("attempt", std::uint64_t(attempt))
                       .text("reason", reason)
                       .line(logger, kLineInfo,
                             fmt::format("waiting for {} (attempt {}): {}", endpoint, attempt,
                                         reason)));
}

}  // namespace

Event waiting(const std::string& endpoint, int attempt, const std::string& reason) {
  return waitingFor(psPeer(endpoint), "net", endpoint, attempt, reason);
}

Event apiWaiting(const std::string& endpoint, int attempt, const std::string& reason) {
  return waitingFor("kubernetes " + endpoint, "cluster", endpoint, attempt, reason);
}

Event alreadyCompleted(int worker, const std::string& runId, std::uint64_t globalStep) {
  return std::move(Event("already_completed")
                       .integer("step", globalStep)
                       .text("run_id", runId)
                       .line("worker", kLineInfo,
                             fmt::format("Worker {}: run {} completed already at global step {}; "
                                         "not training it again",
                                         worker, runId, globalStep)));
}

Event done(const std::string& role, std::uint64_t globalStep, double elapsedSeconds) {
  Event e = doneEvent(globalStep, elapsedSeconds, std::nullopt);
  e.line(role, kLineInfo, fmt::format("Training ends @ {:.6f}", e.time));
  e.line(role, kLineInfo, fmt::format("Training elapsed time: {:.6f} s", elapsedSeconds));
  return e;
}

Event model(const std::string& modelPath, std::uint64_t globalStep, double testAccuracy,
            double trainingElapsedSeconds) {
  return std::move(Event("model")
                       .text("model_path", modelPath)
                       .integer("global_step", globalStep)
                       .number("test_accuracy", testAccuracy)
                       .number("training_elapsed_s", trainingElapsedSeconds));
}

Event runDone(std::uint64_t globalStep, double elapsedSeconds, std::optional<double> accuracy) {
  return doneEvent(globalStep, elapsedSeconds, accuracy);
}

Event page(const std::string& url) {
  return std::move(
      Event("page").text("url", url).line("local", kLineInfo, "worker 0's page: " + url));
}

Event restarted(const std::string& child, int status, int restart, double delaySeconds) {
  return std::move(
      Event("restarted")
          .text("child", child)
          .integer("status", std::uint64_t(status))
          .integer("restart", std::uint64_t(restart))
          .number("delay_s", delaySeconds)
          .line("local", kLineWarn,
                fmt::format("{} exited with status {}; starting it again in {:g} s (restart {})",
                            child, status, delaySeconds, restart)));
}

Event crashLoop(const std::string& child, int runs, double delaySeconds) {
  return std::move(
      Event("crash_loop")
          .text("child", child)
          .integer("runs", std::uint64_t(runs))
          .number("delay_s", delaySeconds)
          .line("local", kLineWarn,
                fmt::format("{} made no step in its last {} runs: it is started again only every "
                            "{:g} s until one does (CrashLoopBackOff)",
                            child, runs, delaySeconds)));
}

Event dataCopyFailed(const std::string& reason) {
  return std::move(Event("data_copy_failed")
                       .text("reason", reason)
                       .line("local", kLineWarn,
                             reason + "; the workers that were to read that copy read the data "
                                      "set itself"));
}

Event stopped(const std::string& signal) {
  return std::move(Event("stopped")
                       .text("signal", signal)
                       .line("app", kLineInfo, fmt::format("received {}, exiting", signal)));
}

}  // namespace event
}  // namespace pstrain::observe
