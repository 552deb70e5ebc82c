#include "pstrain/config/config.hpp"

#include <unistd.h>  // environ
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/config/keys.hpp"
#include "pstrain/config/value_parsers.hpp"

namespace pstrain::config {
namespace {

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
    // The failpoints are no setting of the run: common/failpoint.hpp reads them at start.
    if (name.rfind("PSTRAIN_", 0) != 0 || name == "PSTRAIN_CONFIG" ||
        name == failpoint::kVariable) {
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
