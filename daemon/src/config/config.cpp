#include "pstrain/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "pstrain/common/error.hpp"
#include "pstrain/net/message.hpp"

extern char** environ;

namespace pstrain::config {
namespace {

// Thrown by a value parser; what() is what the key allows. load() turns it into a ConfigError
// naming the key, the value and where it came from.
class InvalidValue : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::int64_t parseInt(const std::string& text, std::int64_t min, std::int64_t max) {
  std::string allowed = "an integer from " + std::to_string(min) +
                        (max == std::numeric_limits<std::int64_t>::max()
                             ? " up"
                             : " to " + std::to_string(max));
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max) {
    throw InvalidValue{allowed};
  }
  return value;
}

double parseDouble(const std::string& text, double minExclusive, double max) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > minExclusive) || !(value <= max)) {
    std::ostringstream allowed;
    allowed << "a number greater than " << minExclusive << " and at most " << max;
    throw InvalidValue{allowed.str()};
  }
  return value;
}

double parseNonNegative(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0) || !(value <= 86400)) {
    throw InvalidValue{"a number of seconds from 0 to 86400"};
  }
  return value;
}

// One of a few named values; the allowed text lists the names: "ps or worker".
template <typename T>
T parseChoice(const std::string& text, std::initializer_list<std::pair<const char*, T>> choices) {
  std::string allowed;
  for (const auto& [name, value] : choices) {
    if (text == name) return value;
    allowed += (allowed.empty() ? "" : " or ") + std::string(name);
  }
  throw InvalidValue{allowed};
}

net::WireEncoding parseEncoding(const std::string& text) {
  if (auto encoding = net::parseWireEncoding(text)) return *encoding;
  throw InvalidValue{"fp32, bf16, q8, q4, q3, q2 or log4"};
}

bool parseBool(const std::string& text) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  throw InvalidValue{"true or false"};
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string nonEmpty(const std::string& text) {
  if (text.empty()) throw InvalidValue{"a non-empty string"};
  return text;
}

// A run id appears in logs and records, a model name in URL paths, so they stay short and plain.
std::string plainName(const std::string& text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](unsigned char ch) {
    return std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.';
  });
  if (text.size() > 64 || !plain) {
    throw InvalidValue{"up to 64 letters, digits, '-', '_' or '.'"};
  }
  return text;
}

// A CORS origin goes into a response header as it is: no spaces or control characters.
std::string validOrigin(const std::string& text) {
  const bool printable =
      std::all_of(text.begin(), text.end(), [](unsigned char ch) { return ch > ' ' && ch < 0x7f; });
  if (text.size() > 256 || !printable) {
    throw InvalidValue{"an origin such as https://example.com, or * (no spaces)"};
  }
  return text;
}

std::string validHostPort(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw InvalidValue{"host:port entries"};
  parseInt(text.substr(colon + 1), 1, 65535);
  return text;
}

// A bool key's flag may stand alone (`--sync` for `--sync true`); every other flag takes a value.
enum class Kind { kValue, kBool };

struct Key {
  using Assign = std::function<void(Config&, const std::string&)>;
  using Part = std::function<std::string(const Config&)>;
  Key(const char* keyName, Assign assignValue, const char* keyHelp, Kind keyKind = Kind::kValue,
      Part fingerprintPart = nullptr)
      : name(keyName),
        assign(std::move(assignValue)),
        help(keyHelp),
        kind(keyKind),
        shapesRun(std::move(fingerprintPart)) {}

  const char* name;
  Assign assign;
  const char* help;
  Kind kind;
  // For a key that shapes the run: its part of the run fingerprint ("batch=100"; "" when it
  // adds nothing). The parts, labels and formats are those fingerprints have always had, so
  // runs started by earlier versions still resume; but for the worker count, which left the
  // fingerprint when workers became free to join and leave a run.
  Part shapesRun;
};

// "label=value", the value written as a stream writes it (a bool as 0 or 1).
template <typename T>
std::string part(const char* label, const T& value) {
  std::ostringstream out;
  out << label << "=" << value;
  return out.str();
}

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

// One value for one key, and where it came from (for error messages).
struct Setting {
  std::string value;
  std::string origin;
};

bool isBoolKey(const std::string& name) {
  const Key* key = findKey(name);
  return key && key->kind == Kind::kBool;
}

std::string keyFromFlag(const std::string& flag) {
  std::string key;
  bool upper = false;
  for (char ch : flag) {
    if (ch == '-') {
      upper = true;
    } else {
      key += upper ? char(std::toupper(static_cast<unsigned char>(ch))) : ch;
      upper = false;
    }
  }
  return key;
}

// Parses "--key value", "--key=value" and bare boolean "--sync". A repeated flag: the last wins.
std::map<std::string, Setting> settingsFromArgs(const std::vector<std::string>& args,
                                                std::string& configFile) {
  std::map<std::string, Setting> settings;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0 || arg.size() < 3) {
      throw ConfigError("unexpected argument '" + arg + "' (flags look like --batch-size 100)");
    }
    std::string flag = arg.substr(2);
    std::optional<std::string> value;
    if (auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    std::string key = keyFromFlag(flag);
    if (flag == "config") {
      key = "config";
    } else if (!findKey(key) || flagName(key) != "--" + flag) {
      throw ConfigError("unknown flag --" + flag + " (pstrain --help lists the flags)");
    }
    if (!value) {
      bool nextIsValue = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
      if (isBoolKey(key) && !nextIsValue) {
        value = "true";
      } else if (!nextIsValue) {
        throw ConfigError("flag --" + flag + " needs a value");
      } else {
        value = args[++i];
      }
    }
    if (key == "config") {
      configFile = *value;
    } else {
      settings[key] = Setting{*value, "flag --" + flag};
    }
  }
  return settings;
}

std::string scalarText(const YAML::Node& node, const std::string& key) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsSequence()) {
    std::string joined;
    for (const auto& item : node) {
      if (!item.IsScalar()) break;
      joined += (joined.empty() ? "" : ",") + item.Scalar();
    }
    return joined;
  }
  throw ConfigError("config file: key " + key + " must be a value or a list of values");
}

std::map<std::string, Setting> settingsFromFile(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError("config file " + path + " cannot be read");
  } catch (const YAML::Exception& e) {
    throw ConfigError("config file " + path + " is not valid YAML: " + e.what());
  }
  std::map<std::string, Setting> settings;
  if (root.IsNull()) return settings;
  if (!root.IsMap()) throw ConfigError("config file " + path + " must be a mapping of keys");
  for (const auto& entry : root) {
    auto key = entry.first.as<std::string>();
    if (!findKey(key)) {
      throw ConfigError("config file " + path + ": unknown key " + key +
                        " (pstrain --help lists the keys)");
    }
    settings[key] = Setting{scalarText(entry.second, key), "config file " + path};
  }
  return settings;
}

std::map<std::string, Setting> settingsFromEnv(const std::map<std::string, std::string>& env) {
  std::map<std::string, Setting> settings;
  for (const auto& [name, value] : env) {
    // PSTRAIN_FAILPOINTS is no setting of the run: common/failpoint.hpp reads it at start.
    if (name.rfind("PSTRAIN_", 0) != 0 || name == "PSTRAIN_CONFIG" ||
        name == "PSTRAIN_FAILPOINTS") {
      continue;
    }
    auto key = std::find_if(keys().begin(), keys().end(),
                            [&](const Key& k) { return envName(k.name) == name; });
    if (key == keys().end()) {
      throw ConfigError("unknown environment variable " + name +
                        " (pstrain --help lists the keys)");
    }
    settings[key->name] = Setting{value, "environment " + name};
  }
  return settings;
}

}  // namespace


std::string flagName(const std::string& key) {
  std::string flag = "--";
  for (char ch : key) {
    if (std::isupper(static_cast<unsigned char>(ch))) {
      flag += '-';
      flag += char(std::tolower(static_cast<unsigned char>(ch)));
    } else {
      flag += ch;
    }
  }
  return flag;
}

std::string envName(const std::string& key) {
  std::string name = "PSTRAIN_";
  for (char ch : flagName(key).substr(2)) {
    name += ch == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(ch)));
  }
  return name;
}

std::string describeKeys() {
  std::ostringstream out;
  for (const auto& key : keys()) {
    out << "  " << flagName(key.name) << " (" << envName(key.name) << ", " << key.name
        << ")\n      " << key.help << "\n";
  }
  return out.str();
}

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text(*entry);
    auto eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return env;
}

int concurrentWorkers(const Config& config, std::optional<int> sharedCpus) {
  if (config.concurrentWorkers != Config::kUnset) return config.concurrentWorkers;
  return sharedCpus && config.workers + config.ps > *sharedCpus ? *sharedCpus : 0;
}

bool synchronous(const Config& config) {
  if (config.consistency == Consistency::kAuto) return concurrentWorkers(config) == 0;
  return config.consistency == Consistency::kSync;
}

std::string describeMode(const Config& config) { return synchronous(config) ? "sync" : "async"; }

std::uint64_t runFingerprint(const Config& config) {
  std::string canonical;  // the parts of the keys that shape the run, in table order
  for (const auto& key : keys()) {
    if (!key.shapesRun) continue;
    auto part = key.shapesRun(config);
    if (part.empty()) continue;
    canonical += (canonical.empty() ? "" : ";") + part;
  }
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (char ch : canonical) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 1099511628211ull;
  }
  return hash;
}

Config load(const Sources& sources) {
  std::string configFile;
  auto fromFlags = settingsFromArgs(sources.args, configFile);
  auto fromEnv = settingsFromEnv(sources.env);
  if (configFile.empty()) {
    if (auto it = sources.env.find("PSTRAIN_CONFIG"); it != sources.env.end()) {
      configFile = it->second;
    }
  }
  auto merged = configFile.empty() ? std::map<std::string, Setting>{} : settingsFromFile(configFile);
  for (const auto& [key, setting] : fromEnv) merged[key] = setting;
  for (const auto& [key, setting] : fromFlags) merged[key] = setting;
  if (!merged.count("podName")) {
    if (auto it = sources.env.find("POD_NAME"); it != sources.env.end() && !it->second.empty()) {
      merged["podName"] = Setting{it->second, "environment POD_NAME"};
    }
  }

  Config config;
  for (const auto& [key, setting] : merged) {
    try {
      findKey(key)->assign(config, setting.value);
    } catch (const InvalidValue& invalid) {
      throw ConfigError("invalid " + key + " = '" + setting.value + "' (" + setting.origin +
                        "): expected " + invalid.what());
    }
  }
  if (config.checkpointDir.empty()) config.checkpointDir = config.logDir;
  if (!config.psHostsFile.empty()) {
    if (!config.psHosts.empty()) throw ConfigError("psHosts and psHostsFile: give one of them");
    std::ifstream file(config.psHostsFile);
    if (!file) throw ConfigError("psHostsFile " + config.psHostsFile + " cannot be read");
    std::string hosts((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    hosts.erase(std::remove_if(hosts.begin(), hosts.end(), [](unsigned char c) {
                  return std::isspace(c);
                }),
                hosts.end());
    try {
      findKey("psHosts")->assign(config, hosts);
    } catch (const InvalidValue& invalid) {
      throw ConfigError("invalid psHosts in " + config.psHostsFile + ": expected " +
                        invalid.what());
    }
    config.ps = int(config.psHosts.size());
  }
  if (!config.psHosts.empty() && int(config.psHosts.size()) != config.ps) {
    throw ConfigError("psHosts lists " + std::to_string(config.psHosts.size()) +
                      " hosts but ps = " + std::to_string(config.ps) + ": they must agree");
  }
  return config;
}

}  // namespace pstrain::config
