#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"
#include "pstrain/net/wire_encoding.hpp"
#include "pstrain/ps/optimizer_kind.hpp"

namespace pstrain::config {

// How the ps combine the workers' gradients: each push a global step of its own (async), or one
// gradient from every worker averaged into each global step (sync). kAuto is decided by
// synchronous() below.
enum class Consistency { kAuto, kSync, kAsync };

// The validated configuration of one process. Built once by load(); never changed after.
struct Config {
  std::optional<Role> role;
  std::optional<int> index;
  std::string podName;

  int ps = 1;
  int workers = 1;
  std::string psService;
  int psPort = 8000;
  int workerPort = 9000;
  int httpPort = 8080;
  std::string modelName = "pstrain";  // in the v2 and TF Serving paths of the model server
  std::string corsOrigin;             // empty: no CORS header
  std::string clusterDomain;
  std::vector<std::string> psHosts;
  std::string psHostsFile;  // psHosts in a file that changes when the ps are re-cut
  double peerTimeoutSeconds = 300;
  double idleTimeoutSeconds = 120;
  double syncTimeoutSeconds = 30;
  std::string authKeyFile;

  std::string dataDir = "/usr/share/pstrain/data";
  std::string logDir = "/tmp/mnist-log";
  bool logToStdout = true;
  std::string checkpointDir;  // empty: the log dir
  double checkpointEverySeconds = 30;
  bool recordHistory = false;  // <logDir>/history.bin (observe::HistoryRecorder)

  std::int64_t trainSteps = 1000;
  int batchSize = 100;
  std::vector<int> hiddenUnits{128};
  double learningRate = 0.001;
  ps::OptimizerKind optimizer = ps::OptimizerKind::kAdam;
  Consistency consistency = Consistency::kAuto;
  // In sync mode, the learning rate follows the gradients a step averages (learningRateScale()).
  bool scaleLearningRate = true;
  std::int64_t warmupSteps = 100;
  // As configured, kUnset if not: read it through concurrentWorkers() below.
  static constexpr int kUnset = -1;
  int concurrentWorkers = kUnset;
  int pushesInFlight = 1;
  // How pushes and answers go on the wire (net::WireEncoding, docs/design.md "Compressed pushes
  // and pulls").
  net::WireEncoding pushEncoding = net::WireEncoding::kLog4;
  net::WireEncoding pullEncoding = net::WireEncoding::kQ3;
  std::int64_t logEverySteps = 1;
  std::int64_t evalEverySteps = 1000;
  std::uint64_t seed = 1;
  std::string runId;  // empty: the run is its training settings alone
  std::string runIdConfigMap;  // with runId empty: runId is this ConfigMap's UID (Kubernetes)
  // Worker 0 scales these StatefulSets to 0 once the run has completed (Kubernetes).
  std::vector<std::string> scaleDownOnCompletion;
};

// The raw inputs a configuration is merged from, highest precedence first.
struct Sources {
  std::vector<std::string> args;              // command-line flags, after the command name
  std::map<std::string, std::string> env;     // the process environment
};

// Merges flags > PSTRAIN_* environment > YAML file (--config) > defaults, validating every
// value. Throws ConfigError naming the key, the offending value and what is allowed.
Config load(const Sources& sources);

// Identifies a training run: a hash of every setting that shapes the model and its training, and
// of runId when set. Workers and ps refuse each other when theirs differ; checkpoints and
// completion records of another run are not resumed.
std::uint64_t runFingerprint(const Config& config);

// How many workers compute at once in asynchronous mode (ps::StepGate, kept by ps 0; 0: all of
// them): as configured, else all when every ps and worker has a CPU of its own, else as many as
// the CPUs they share. `sharedCpus`: those of the one machine every process runs on (`pstrain
// local`); none for processes on nodes of their own (pods). A sync step waits for its slowest
// worker: on 2 cores, 2 ps and 2 sync workers reached 0.87 in 1.85 s against 1.54 s for 2
// asynchronous ones (medians of 5). More at once than the CPUs only make each compute on older
// parameters: with 8 workers on 2 cores, a push's staleness is 1.0 global step at 2 and 1.7 at
// 3, for the same time to 0.85.
int concurrentWorkers(const Config& config, std::optional<int> sharedCpus = std::nullopt);

// Whether the run is synchronous. Auto: sync unless concurrentWorkers() bounds the workers that
// compute at once (then asynchronous within it). Every worker computing at once on a core of its
// own (a pod each, or `pstrain local` with a CPU for every process) reaches a target accuracy
// sooner in sync mode with the learning rate scaled to the step's gradients, as workers are
// added; asynchronous workers push gradients about W - 1 steps old and need about W times the
// steps (docs/design.md, "Consistency by default").
bool synchronous(const Config& config);

// The mode as events and logs name it: "sync" or "async" (a `started` event's `mode`).
std::string describeMode(const Config& config);

// The environment of this process, for Sources::env.
std::map<std::string, std::string> processEnvironment();

// "--batch-size" for "batchSize"; "PSTRAIN_BATCH_SIZE" for the environment.
std::string flagName(const std::string& key);
std::string envName(const std::string& key);

// A one-line-per-key description of every key, for --help.
std::string describeKeys();

}  // namespace pstrain::config
