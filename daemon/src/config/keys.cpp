#include "pstrain/config/keys.hpp"

#include <limits>
#include <sstream>

#include "pstrain/config/value_parsers.hpp"
#include "pstrain/net/limits.hpp"

namespace pstrain::config {
namespace {

// "label=value", the value written as a stream writes it (a bool as 0 or 1).
template <typename T>
std::string part(const char* label, const T& value) {
  std::ostringstream out;
  out << label << "=" << value;
  return out.str();
}

}  // namespace

const std::vector<Key>& keys() {
  constexpr auto kMaxInt64 = std::numeric_limits<std::int64_t>::max();
  static const std::vector<Key> table = {
      {"role",
       [](Config& c, const std::string& v) {
         c.role = parseChoice<Role>(v, {{"ps", Role::kPs}, {"worker", Role::kWorker}});
       },
       "ps or worker (default: from the pod name)"},
      {"index", [](Config& c, const std::string& v) { c.index = int(parseInt(v, 0, 100000)); },
       "ordinal within the role (default: from the pod name)"},
      {"podName", [](Config& c, const std::string& v) { c.podName = nonEmpty(v); },
       "<prefix>-<role>-<ordinal> (default: $POD_NAME, else the hostname)"},
      // Not part of the run: worker 0 re-cuts the parameters when it changes during one.
      {"ps", [](Config& c, const std::string& v) { c.ps = int(parseInt(v, 1, 1024)); },
       "number of parameter servers"},
      // Not part of the run: workers join and leave during one, each known by its index alone.
      {"workers", [](Config& c, const std::string& v) { c.workers = int(parseInt(v, 1, 4096)); },
       "number of workers `pstrain local` starts (others may join a run, and any may leave)"},
      {"psService", [](Config& c, const std::string& v) { c.psService = nonEmpty(v); },
       "headless Service of the ps pods (default: <prefix>-ps)"},
      {"psPort", [](Config& c, const std::string& v) { c.psPort = int(parseInt(v, 1, 65535)); },
       "port every ps listens on"},
      {"workerPort",
       [](Config& c, const std::string& v) { c.workerPort = int(parseInt(v, 1, 65535)); },
       "port of the workers' Service (workers serve only HTTP, on httpPort)"},
      {"httpPort", [](Config& c, const std::string& v) { c.httpPort = int(parseInt(v, 1, 65535)); },
       "port of /healthz, /readyz, /metrics and /status"},
      {"modelName", [](Config& c, const std::string& v) { c.modelName = nonEmpty(plainName(v)); },
       "the model's name in the KServe v2 and TensorFlow Serving paths (/v2/models/NAME/infer)"},
      {"corsOrigin", [](Config& c, const std::string& v) { c.corsOrigin = validOrigin(v); },
       "Access-Control-Allow-Origin for browsers on another origin (empty: no CORS header)"},
      {"clusterDomain", [](Config& c, const std::string& v) { c.clusterDomain = v; },
       "cluster DNS domain; when set, peers are named by FQDN"},
      {"psHosts",
       [](Config& c, const std::string& v) {
         c.psHosts.clear();
         for (const auto& host : splitList(v)) c.psHosts.push_back(validHostPort(host));
       },
       "host:port of every ps, comma-separated (replaces the DNS names)"},
      {"psHostsFile", [](Config& c, const std::string& v) { c.psHostsFile = nonEmpty(v); },
       "a file that holds psHosts, read again by worker 0 to re-cut the ps when it changes"},
      {"peerTimeoutSeconds",
       [](Config& c, const std::string& v) { c.peerTimeoutSeconds = parseDouble(v, 0, 86400); },
       "how long to wait for a peer before giving up"},
      {"idleTimeoutSeconds",
       [](Config& c, const std::string& v) { c.idleTimeoutSeconds = parseDouble(v, 0, 86400); },
       "a connection silent this long is closed"},
      {"syncTimeoutSeconds",
       [](Config& c, const std::string& v) { c.syncTimeoutSeconds = parseDouble(v, 0, 86400); },
       "in sync mode, how long a step waits for every worker before it averages those that came"},
      {"authKeyFile", [](Config& c, const std::string& v) { c.authKeyFile = v; },
       "file with the shared key every connection must prove (empty: no authentication)"},
      {"checkpointDir", [](Config& c, const std::string& v) { c.checkpointDir = v; },
       "where a ps keeps its checkpoint and a worker its completion record (default: logDir)"},
      {"checkpointEverySeconds",
       [](Config& c, const std::string& v) { c.checkpointEverySeconds = parseNonNegative(v); },
       "seconds between ps checkpoints (0: only at the end and on SIGTERM)"},
      {"dataDir", [](Config& c, const std::string& v) { c.dataDir = nonEmpty(v); },
       "directory with the MNIST IDX files"},
      {"logDir", [](Config& c, const std::string& v) { c.logDir = nonEmpty(v); },
       "directory for deploy.log and results"},
      {"logToStdout", [](Config& c, const std::string& v) { c.logToStdout = parseBool(v); },
       "also log to stdout", Kind::kBool},
      {"recordHistory", [](Config& c, const std::string& v) { c.recordHistory = parseBool(v); },
       "record every push, step, re-cut and checkpoint in <logDir>/history.bin, for "
       "history_check", Kind::kBool},
      {"trainSteps",
       [](Config& c, const std::string& v) { c.trainSteps = parseInt(v, 1, kMaxInt64); },
       "global steps to train", Kind::kValue,
       [](const Config& c) { return part("steps", c.trainSteps); }},
      {"batchSize",
       [](Config& c, const std::string& v) { c.batchSize = int(parseInt(v, 1, 60000)); },
       "examples per worker step", Kind::kValue,
       [](const Config& c) { return part("batch", c.batchSize); }},
      {"learningRate",
       [](Config& c, const std::string& v) { c.learningRate = parseDouble(v, 0, 10); },
       "optimizer step size", Kind::kValue,
       [](const Config& c) { return part("lr", c.learningRate); }},
      {"optimizer",
       [](Config& c, const std::string& v) {
         using ps::OptimizerKind;
         c.optimizer =
             parseChoice<OptimizerKind>(v, {{"adam", OptimizerKind::kAdam}, {"sgd", OptimizerKind::kSgd}});
       },
       "adam or sgd", Kind::kValue,
       [](const Config& c) { return part("optimizer", int(c.optimizer)); }},
      {"sync",
       [](Config& c, const std::string& v) {
         try {
           c.consistency = v == "auto" ? Consistency::kAuto
                                       : parseBool(v) ? Consistency::kSync : Consistency::kAsync;
         } catch (const InvalidValue&) {
           throw InvalidValue{"true, false or auto"};
         }
       },
       "synchronous training: true, false or auto (sync unless concurrentWorkers bounds the "
       "workers computing at once)",
       Kind::kBool, [](const Config& c) { return part("sync", synchronous(c)); }},
      {"scaleLearningRate",
       [](Config& c, const std::string& v) { c.scaleLearningRate = parseBool(v); },
       "sync mode: multiply the learning rate by the gradients a step averages (adam: their "
       "square root), reached over warmupSteps",
       Kind::kBool,
       [](const Config& c) {
         return synchronous(c) && c.scaleLearningRate ? part("lrscale", 1) : std::string();
       }},
      {"warmupSteps",
       [](Config& c, const std::string& v) { c.warmupSteps = parseInt(v, 0, kMaxInt64); },
       "sync mode: global steps over which the scaled learning rate rises from the configured one",
       Kind::kValue,
       [](const Config& c) {
         return synchronous(c) && c.scaleLearningRate ? part("warmup", c.warmupSteps)
                                                      : std::string();
       }},
      {"concurrentWorkers",
       [](Config& c, const std::string& v) { c.concurrentWorkers = int(parseInt(v, 0, 100000)); },
       "asynchronous mode: at most this many workers compute at once, the others wait for "
       "fresh parameters (0: all; pstrain local: its CPUs)"},
      {"pushesInFlight",
       [](Config& c, const std::string& v) {
         c.pushesInFlight = int(parseInt(v, 1, net::kMaxPushesInFlight));
       },
       "pushes a worker sends before it reads the oldest one's answer: more overlap a long round "
       "trip with compute, each gradient computed on parameters that many answers old"},
      {"pushEncoding",
       [](Config& c, const std::string& v) { c.pushEncoding = parseEncoding(v); },
       "how pushes go on the wire: fp32, bf16, q8, q4, q3, q2 or log4 (what a lossy encoding does "
       "not send of a gradient goes with the worker's next push)"},
      {"pullEncoding",
       [](Config& c, const std::string& v) { c.pullEncoding = parseEncoding(v); },
       "how the ps send parameters: fp32, or bf16, q8, q4, q3, q2 or log4 changes since the "
       "worker's copy (what an answer does not send goes with the next)"},
      {"logEverySteps",
       [](Config& c, const std::string& v) { c.logEverySteps = parseInt(v, 1, kMaxInt64); },
       "progress line every N steps"},
      {"evalEverySteps",
       [](Config& c, const std::string& v) { c.evalEverySteps = parseInt(v, 0, kMaxInt64); },
       "worker 0 logs test accuracy every N global steps (0: only at the end)"},
      {"seed",
       [](Config& c, const std::string& v) { c.seed = std::uint64_t(parseInt(v, 0, kMaxInt64)); },
       "initialisation and shuffling seed", Kind::kValue,
       [](const Config& c) { return part("seed", c.seed); }},
      {"hiddenUnits",
       [](Config& c, const std::string& v) {
         c.hiddenUnits.clear();
         for (const auto& width : splitList(v)) {
           try {
             c.hiddenUnits.push_back(int(parseInt(width, 1, 65536)));
           } catch (const InvalidValue&) {
             throw InvalidValue{"comma-separated layer widths from 1 to 65536"};
           }
         }
         if (c.hiddenUnits.empty() || c.hiddenUnits.size() > 8) {
           throw InvalidValue{"1 to 8 comma-separated layer widths"};
         }
       },
       "hidden layer widths, comma-separated", Kind::kValue,
       [](const Config& c) {
         std::string widths;
         for (int width : c.hiddenUnits) widths += std::to_string(width) + ",";
         return "hidden=" + widths;
       }},
      {"runId", [](Config& c, const std::string& v) { c.runId = plainName(v); },
       "identity of the run beyond its settings: another id is another run, which resumes no "
       "checkpoint and no completion record of this one (empty: the settings alone)",
       Kind::kValue,
       // Without a run id the fingerprint is what it was before the key existed.
       [](const Config& c) { return c.runId.empty() ? std::string() : "run=" + c.runId; }},
      {"runIdConfigMap",
       [](Config& c, const std::string& v) { c.runIdConfigMap = plainName(v); },
       "on Kubernetes with runId empty: the ConfigMap in the pod's namespace whose UID becomes "
       "runId (a reinstall creates it anew, a re-apply keeps it); read with the pod's "
       "ServiceAccount token"},
      {"scaleDownOnCompletion",
       [](Config& c, const std::string& v) {
         c.scaleDownOnCompletion.clear();
         for (const auto& name : splitList(v)) c.scaleDownOnCompletion.push_back(plainName(name));
       },
       "on Kubernetes: StatefulSets in the pod's namespace, comma-separated, that worker 0 scales "
       "to 0 once the run has completed, with the pod's ServiceAccount token (empty: none)"},
  };
  return table;
}

const Key* findKey(const std::string& name) {
  for (const auto& key : keys()) {
    if (name == key.name) return &key;
  }
  return nullptr;
}

}  // namespace pstrain::config
