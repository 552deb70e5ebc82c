#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pstrain/common/role.hpp"

namespace pstrain::config {

enum class OptimizerKind { kAdam, kSgd };

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
  double peerTimeoutSeconds = 300;
  double idleTimeoutSeconds = 120;
  double syncTimeoutSeconds = 30;
  std::string authKeyFile;

  std::string dataDir = "/usr/share/pstrain/data";
  std::string logDir = "/tmp/mnist-log";
  bool logToStdout = true;
  std::string checkpointDir;  // empty: the log dir
  double checkpointEverySeconds = 30;

  std::int64_t trainSteps = 1000;
  int batchSize = 100;
  std::vector<int> hiddenUnits{128};
  double learningRate = 0.001;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  bool sync = false;
  // How many workers compute at once (ps::StepGate); 0: all of them; kUnset until configured,
  // which a ps takes as 0 and `pstrain local` as one more than the CPUs its processes share.
  static constexpr int kUnset = -1;
  int concurrentWorkers = kUnset;
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

// The environment of this process, for Sources::env.
std::map<std::string, std::string> processEnvironment();

// "--batch-size" for "batchSize"; "PSTRAIN_BATCH_SIZE" for the environment.
std::string flagName(const std::string& key);
std::string envName(const std::string& key);

// A one-line-per-key description of every key, for --help.
std::string describeKeys();

}  // namespace pstrain::config
