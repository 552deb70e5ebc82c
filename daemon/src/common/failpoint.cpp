#include "pstrain/common/failpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace pstrain::failpoint {
namespace detail {
std::atomic<bool> anyOn{false};
}  // namespace detail

namespace {


struct Setting {
  Action action = Action::kOff;
  std::uint64_t argument = 0;
  std::uint64_t remaining = 0;  // hits left to act on; 0: every hit
  std::uint64_t skipped = 0;    // hits to let pass before the first that acts
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Setting> on;
  std::map<std::string, std::uint64_t> triggered;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

struct ActionName {
  const char* name;
  Action action;
  bool takesArgument;
};
constexpr ActionName kActions[] = {
    {"off", Action::kOff, false},     {"kill", Action::kKill, false},
    {"pause", Action::kPause, true},  {"error", Action::kError, false},
    {"again", Action::kAgain, false}, {"skip", Action::kSkip, false},
    {"zero", Action::kZero, false},   {"drop", Action::kDrop, true},
};

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

std::uint64_t number(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    throw ConfigError(what + " must be a whole number, not '" + text + "'");
  }
  return std::stoull(text);
}

const Site& siteNamed(const std::string& name) {
  for (const auto& site : sites()) {
    if (name == site.name) return site;
  }
  std::string known;
  for (const auto& site : sites()) known += std::string(known.empty() ? "" : ", ") + site.name;
  throw ConfigError("unknown failpoint '" + name + "' (the failpoints: " + known + ")");
}

Setting parse(const Site& site, const std::string& text) {
  const std::string where = std::string("failpoint ") + site.name;
  Setting setting;
  std::string rest = trimmed(text);
  if (const auto plus = rest.find('+'); plus != std::string::npos) {
    setting.skipped = number(trimmed(rest.substr(0, plus)), where + ": the hits to let pass");
    rest = trimmed(rest.substr(plus + 1));
  }
  if (const auto star = rest.find('*'); star != std::string::npos) {
    setting.remaining = number(trimmed(rest.substr(0, star)), where + ": the count");
    if (setting.remaining == 0) throw ConfigError(where + ": a count of 0 hits");
    rest = trimmed(rest.substr(star + 1));
  }
  std::string argument;
  if (const auto open = rest.find('('); open != std::string::npos) {
    if (rest.back() != ')') throw ConfigError(where + ": '" + text + "' lacks its ')'");
    argument = trimmed(rest.substr(open + 1, rest.size() - open - 2));
    rest = trimmed(rest.substr(0, open));
  }
  const auto* named = std::find_if(std::begin(kActions), std::end(kActions),
                                   [&](const ActionName& a) { return rest == a.name; });
  if (named == std::end(kActions)) {
    throw ConfigError(where + ": unknown action '" + rest +
                      "' (off, kill, pause(ms), error, again, skip, zero, drop(n))");
  }
  setting.action = named->action;
  if (named->takesArgument) {
    setting.argument = number(argument, where + ": " + named->name + "'s argument");
  } else if (!argument.empty()) {
    throw ConfigError(where + ": " + named->name + " takes no argument");
  }
  const bool planted = setting.action >= Action::kAgain;
  if (planted && std::find(site.planted.begin(), site.planted.end(), setting.action) ==
                     site.planted.end()) {
    throw ConfigError(where + " does not plant '" + named->name + "'");
  }
  return setting;
}

// Under the registry's mutex.
void apply(Registry& r, const std::string& name, const Setting& setting) {
  r.triggered[name] = 0;
  if (setting.action == Action::kOff) {
    r.on.erase(name);
  } else {
    r.on[name] = setting;
  }
  detail::anyOn.store(!r.on.empty(), std::memory_order_relaxed);
}

}  // namespace

const std::vector<Site>& sites() {
  static const std::vector<Site> all{
      {"ps.after-apply", {Action::kAgain}, "a ps applied a push and has not answered it"},
      {"checkpoint.before-rename", {}, "a checkpoint is written and synced, not yet renamed"},
      {"recut.frozen", {}, "a ps froze its cut for a re-cut and has not sent its slice"},
      {"recut.install", {Action::kZero, Action::kDrop},
       "a ps received its slice of a re-cut and has not installed it"},
      {"recut.installed", {}, "a ps serves its new cut and has not told worker 0"},
      {"recut.after-freeze", {}, "worker 0 took a frozen ps's slices"},
      {"recut.after-prepare", {}, "worker 0 gave a ps its slice of the new cut"},
      {"recut.after-commit", {}, "worker 0 told a ps to serve its slice of the new cut"},
      {"recut.before-report", {}, "every ps serves the new cut; worker 0 has not recorded it"},
      {"shard.step", {Action::kSkip}, "an asynchronous push is given its global step"},
      {"shard.sync-barrier", {Action::kSkip},
       "a sync worker's pull or push waits for its last push to leave the barrier"},
  };
  return all;
}

namespace detail {

Hit hit(const char* name) {
  auto& r = registry();
  Setting setting;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto found = r.on.find(name);
    if (found == r.on.end()) return {};
    if (found->second.skipped > 0) {
      --found->second.skipped;
      return {};
    }
    setting = found->second;
    ++r.triggered[name];
    if (setting.remaining == 1) {
      r.on.erase(found);
      detail::anyOn.store(!r.on.empty(), std::memory_order_relaxed);
    } else if (setting.remaining > 1) {
      --found->second.remaining;
    }
  }
  switch (setting.action) {
    case Action::kKill:
      ::kill(::getpid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::hours(1));  // until the signal lands
      return {};
    case Action::kPause:
      std::this_thread::sleep_for(std::chrono::milliseconds(setting.argument));
      return {};
    case Action::kError: throw FailpointError(std::string("failpoint ") + name);
    default: return {setting.action, setting.argument};
  }
}

}  // namespace detail

void set(const std::string& name, const std::string& setting) {
  const auto parsed = parse(siteNamed(name), setting);
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  apply(r, name, parsed);
}

void configure(const std::string& spec) {
  std::map<std::string, Setting> parsed;
  size_t begin = 0;
  while (begin <= spec.size()) {
    auto end = spec.find(';', begin);
    if (end == std::string::npos) end = spec.size();
    const auto entry = trimmed(spec.substr(begin, end - begin));
    begin = end + 1;
    if (entry.empty()) continue;
    const auto equals = entry.find('=');
    if (equals == std::string::npos) {
      throw ConfigError("'" + entry + "' is not name=setting");
    }
    const auto name = trimmed(entry.substr(0, equals));
    parsed[name] = parse(siteNamed(name), entry.substr(equals + 1));
  }
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& [name, setting] : parsed) apply(r, name, setting);
}

void configureFromEnvironment() {
  const char* spec = std::getenv(kVariable);
  if (!spec) return;
  try {
    configure(spec);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("invalid ") + kVariable + ": " + e.what());
  }
}

void clear() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.on.clear();
  detail::anyOn.store(false, std::memory_order_relaxed);
}

std::uint64_t triggered(const std::string& name) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto found = r.triggered.find(name);
  return found == r.triggered.end() ? 0 : found->second;
}

}  // namespace pstrain::failpoint
