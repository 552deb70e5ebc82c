#pragma once

#include <spdlog/common.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pstrain::observe {

enum class State { kWaiting, kTraining, kCompleted };
std::string stateName(State state);

// One thing that happened, as both records tell it: the fields of its events.jsonl line (for
// machines: the plot, the page, the tests) and the deploy.log lines rendered from the same
// values (for people; the seed's lines keep the seed's wording). Built by the functions below,
// one per event, the one place that names events and fields (docs/operations.md, "Events"; those
// of a worker's ps client are written in client_event.cpp, the rest in event.cpp); Events::emit()
// writes both.
struct Event {
  struct Field {
    std::string key;
    std::string json;
  };
  enum class Curve { kNone, kLoss, kAccuracy };

  explicit Event(std::string eventName);

  // Fields in snake_case, as /status and result.json name theirs.
  Event& number(const std::string& key, double value);  // NaN: null, "not known"
  Event& integer(const std::string& key, std::uint64_t value);
  Event& text(const std::string& key, const std::string& value);
  Event& flag(const std::string& key, bool value);
  // A line of `logger`'s in deploy.log.
  Event& line(const std::string& logger, spdlog::level::level_enum level, std::string text);

  std::string name;
  double time;  // Unix seconds, when it was built
  std::vector<Field> fields;
  std::string logger;  // "" when it writes no log line
  spdlog::level::level_enum level = spdlog::level::info;
  std::vector<std::string> lines;
  // Steps are written out within a second, everything else at once, as deploy.log's lines.
  bool urgent = true;
  // The point it adds to a curve of GET /history, at `curveTime` (Unix seconds).
  Curve curve = Curve::kNone;
  std::uint64_t curveStep = 0;
  double curveValue = 0;
  double curveTime = 0;
};

// Who said it: "ps HOST:PORT", "worker N", as the `peer` field names them.
std::string psPeer(const std::string& endpoint);
std::string workerPeer(std::uint32_t worker);

namespace event {

// The levels of events' deploy.log lines.
inline constexpr auto kLineInfo = spdlog::level::info;
inline constexpr auto kLineWarn = spdlog::level::warn;
inline constexpr auto kLineError = spdlog::level::err;

// A ps or worker process began: "pstrain VERSION: ROLE INDEX of a MODE run of N ps; ...", MODE
// as config::describeMode says it, and the wire encodings of pushes and answers
// (net::WireEncoding's names).
Event started(const std::string& version, const std::string& role, int index, int psCount,
              const std::string& mode, const std::string& psHosts, const std::string& blasCore,
              const std::string& blasKernels, int blasThreads, long pid,
              const std::string& pushEncoding, const std::string& pullEncoding);
Event state(State state);
// A ps accepts workers on `port`.
Event listening(int ps, int port);
// A step, at the cadence of the progress line: the ps's global step `globalStep`, applied from
// `worker`'s local step, with `staleness` the mean of the pushes since its previous step event;
// or a worker's own local step, after which the model was at `globalStep` (no staleness).
Event psStep(int ps, std::uint64_t globalStep, std::uint32_t worker, std::uint64_t localStep,
             float loss, double staleness);
Event workerStep(int worker, std::uint64_t globalStep, std::uint64_t localStep, float loss);
// A ps at the end of training: the staleness of its pushes over the run (mean, and the bound of
// the histogram bucket that holds the 99th percentile).
Event staleness(int ps, std::uint64_t pushes, double mean, double p99);
// Worker 0's test accuracy of the parameters taken at `takenAt` (Unix seconds; evaluation comes
// later).
Event accuracy(std::uint64_t localStep, std::uint64_t globalStep, double accuracy,
               double takenAt);
// A sync step taken at the deadline, with fewer gradients than the workers connected.
Event averaged(int ps, std::uint64_t globalStep, int averaged, int workers,
               std::int64_t timeoutMs);
// Worker `worker` trains on `examples` examples in batches of `batch` until global step
// `trainSteps`; the weight gradients of `factoredLayers` of its `layers` go to the ps as their
// factors.
Event trainingPlan(int worker, std::uint64_t examples, int batch, std::uint64_t trainSteps,
                   long factoredLayers, size_t layers);
// Where worker `worker`'s average step went, once training has ended: computing, communicating
// and waiting for the ps (ms), and the bytes it exchanged.
Event stepCosts(int worker, double computeMs, double communicationMs, double waitingMs,
                double bytes);
// A worker's part of the training set changed: examples [first, end) of `total`, part `rank` of
// `workers`.
Event divided(int worker, std::uint32_t rank, std::uint32_t workers, std::uint64_t first,
              std::uint64_t end, std::uint64_t total);
// Worker `worker` joined ps `ps` from `address`; worker `worker` reached ps `endpoint`, which
// serves `count` parameters from `offset`.
Event workerConnected(int ps, std::uint32_t worker, const std::string& address,
                      std::uint64_t globalStep);
Event psConnected(int worker, const std::string& endpoint, std::uint64_t offset,
                  std::uint64_t count, std::uint64_t globalStep);
Event lost(int worker, const std::string& endpoint, const std::string& reason);
Event reconnected(int worker, const std::string& endpoint, std::uint64_t globalStep);
// Worker `worker` could not tell ps `endpoint` that it has finished (`reason`).
Event goodbyeFailed(int worker, const std::string& endpoint, const std::string& reason);
// A worker waits for the ps at `endpoint` (its DNS name does not resolve yet, it does not
// answer yet): attempt `attempt` failed with `reason`.
Event waiting(const std::string& endpoint, int attempt, const std::string& reason);
// The process waits for the Kubernetes API at `endpoint` (its run id, or to scale the run down):
// attempt `attempt` failed with `reason`.
Event apiWaiting(const std::string& endpoint, int attempt, const std::string& reason);
// A ps closed a connection from `address` that was no worker of its run (noise, a wrong key,
// a malformed frame, no first frame in time).
Event rejected(const std::string& address, const std::string& reason);
// A worker said it has finished after `localSteps` steps.
// Ps `ps` holds parameters [offset, offset + count) of `parameterCount` (`description`: its
// optimizer, mode and encodings).
Event loaded(int ps, std::uint64_t offset, std::uint64_t count, std::uint64_t parameterCount,
             const std::string& description);
// The checkpoint at `path` is of run `otherRun`: ps `ps` starts run `runId` afresh.
Event checkpointIgnored(int ps, const std::string& path, std::uint64_t otherRun,
                        std::uint64_t runId);
// A periodic checkpoint of ps `ps` could not be written.
Event checkpointFailed(int ps, const std::string& what);
// A connection from `peer` ended: the peer left or broke off, or (`failed`) the session failed.
Event sessionEnded(const std::string& peer, const std::string& reason, bool failed);
// The ps's listener could not poll or accept connections.
Event listenerFailed(const std::string& what);
Event finished(int ps, std::uint32_t worker, std::uint64_t localSteps);
Event checkpoint(int ps, std::uint64_t globalStep, const std::string& path);
Event restored(int ps, std::uint64_t globalStep, const std::string& path, bool completed);
// A ps without a checkpoint (`fromStep` 0), or with one older than the step the workers saw,
// took its shard from `worker`'s copy at `globalStep`.
Event recovered(int ps, std::uint64_t fromStep, std::uint64_t globalStep, std::uint32_t worker);
// A re-cut of the ps: ps `ps` applies no more pushes at `globalStep` for the re-cut to
// `generation`; it serves parameters [offset, offset + count) as ps `index` of `psCount` from
// `globalStep` (count 0: it is out of the run); a re-cut that did not install its cut left it
// serving the cut it had.
Event cutFrozen(int ps, std::uint64_t generation, std::uint64_t globalStep);
Event cutServed(int ps, std::uint64_t generation, int psCount, int index, std::uint64_t offset,
                std::uint64_t count, std::uint64_t globalStep);
Event cutThawed(int ps, std::uint64_t generation, std::uint64_t globalStep);
// Worker 0 re-cut the parameters from `fromPs` to `toPs` ps (generation `generation`) at
// `globalStep`; `movedState` parameters took their optimizer state along, `lostState` started it
// again (their ps could not be reached: `unreached`, "" if none).
Event recut(std::uint64_t generation, int fromPs, int toPs, std::uint64_t globalStep,
            std::uint64_t movedState, std::uint64_t lostState, const std::string& unreached);
// Worker 0's re-cut did not complete (`reason`: a ps went away during it); connecting again finds
// the ps on two cuts and re-cuts them.
Event recutIncomplete(const std::string& reason);
// A worker found its run `runId` completed before it started: it does not train again.
Event alreadyCompleted(int worker, const std::string& runId, std::uint64_t globalStep);
// Training ended at `globalStep` after `elapsedSeconds`: a ps at its last step, a worker after
// its last exchange (worker 0's final test accuracy follows, as an accuracy event); `role` is the
// logger of its lines.
Event done(const std::string& role, std::uint64_t globalStep, double elapsedSeconds);
// Worker 0 wrote the run's model to `modelPath` at `globalStep`, with its final test accuracy
// and the training loop's time; no line (worker 0 logs its summary).
Event model(const std::string& modelPath, std::uint64_t globalStep, double testAccuracy,
            double trainingElapsedSeconds);
// The launcher's run ended: its summary with the test accuracy, and no line (it prints the
// summary).
Event runDone(std::uint64_t globalStep, double elapsedSeconds, std::optional<double> accuracy);
// The launcher serves worker 0's page at `url`.
Event page(const std::string& url);
// A child of `pstrain local` ended with `status` and is started again after `delaySeconds`.
Event restarted(const std::string& child, int status, int restart, double delaySeconds);
// A child of `pstrain local` made no global step in its last `runs` runs: its restarts have
// backed off to the cap, `delaySeconds` apart, until a run makes steps.
Event crashLoop(const std::string& child, int runs, double delaySeconds);
// `pstrain local` could not write the data set's plain copy (`reason`): the workers that were to
// read it read the data set itself.
Event dataCopyFailed(const std::string& reason);
// The process ends on `signal` (SIGTERM, SIGINT), after its last checkpoint.
Event stopped(const std::string& signal);

}  // namespace event
}  // namespace pstrain::observe
