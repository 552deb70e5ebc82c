#include "pstrain/app/local/child_planner.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/net/auth.hpp"
#include "pstrain/net/free_ports.hpp"

namespace pstrain::app::local {
namespace {

namespace fs = std::filesystem;

// A key for the children to prove to each other, made once per log dir (kept for a resumed run).
std::string makeAuthKeyFile(const std::string& logDir) {
  const std::string path = logDir + "/auth.key";
  if (fs::exists(path)) return path;
  fs::create_directories(logDir);
  std::string key;
  for (auto byte : net::randomNonce()) key += fmt::format("{:02x}", byte);
  for (auto byte : net::randomNonce()) key += fmt::format("{:02x}", byte);
  writeFileAtomically(path, key + "\n");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  return path;
}

// The HTTP port the user asked for with --http-port (the last one, as for every flag): worker
// 0's, where its page is.
std::optional<int> chosenHttpPort(const std::vector<std::string>& args,
                                  const config::Config& settings) {
  const bool chosen = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "--http-port" || arg.rfind("--http-port=", 0) == 0;
  });
  return chosen ? std::optional<int>(settings.httpPort) : std::nullopt;
}

}  // namespace

ChildPlanner::ChildPlanner(std::string self, std::vector<std::string> args,
                           const config::Config& settings, std::string psHostsPath)
    : self_(std::move(self)),
      args_(std::move(args)),
      settings_(settings),
      psHostsPath_(std::move(psHostsPath)),
      authKeyFile_(settings.authKeyFile.empty() ? makeAuthKeyFile(settings.logDir) : "") {}

ChildSpec ChildPlanner::plan(const std::string& role, int index, int port, int httpPort) const {
  ChildSpec spec;
  spec.name = role + "-" + std::to_string(index);
  spec.dir = settings_.logDir + "/" + spec.name;
  spec.httpPort = httpPort;
  spec.argv = {self_, "run"};
  spec.argv.insert(spec.argv.end(), args_.begin(), args_.end());
  const std::vector<std::string> placement{
      "--role", role, "--index", std::to_string(index), "--ps-hosts-file", psHostsPath_,
      role == "ps" ? "--ps-port" : "--worker-port", std::to_string(port), "--http-port",
      std::to_string(httpPort), "--log-dir", spec.dir, "--log-to-stdout", "false",
      "--concurrent-workers", std::to_string(settings_.concurrentWorkers)};
  spec.argv.insert(spec.argv.end(), placement.begin(), placement.end());
  if (!authKeyFile_.empty()) spec.argv.insert(spec.argv.end(), {"--auth-key-file", authKeyFile_});
  return spec;
}

std::vector<Child> ChildPlanner::firstChildren(PsHosts& psHosts, const std::vector<int>& fronts,
                                               const std::optional<std::string>& dataCopy) const {
  // Each child gets its ps or worker port, then an HTTP port: ports[i] and ports[children + i];
  // worker 0 the HTTP port the user chose, if any, which no other child may get.
  const int childCount = settings_.ps + settings_.workers;
  const auto chiefPort = chosenHttpPort(args_, settings_);
  auto ports = net::freeLoopbackPorts(2 * childCount + 1);
  if (auto taken = std::find(ports.begin(), ports.end(), chiefPort.value_or(0));
      taken != ports.end()) {
    ports.erase(taken);
  }
  fs::create_directories(settings_.logDir);
  for (int i = 0; i < settings_.ps; ++i) {
    psHosts.add(fronts.empty() ? ports[size_t(i)] : fronts[size_t(i)]);
  }
  std::vector<Child> children;
  const int capacity = settings_.concurrentWorkers;
  for (int i = 0; i < childCount; ++i) {
    const bool isPs = i < settings_.ps;
    const int index = isPs ? i : i - settings_.ps;
    const int httpPort =
        !isPs && index == 0 && chiefPort ? *chiefPort : ports[size_t(childCount + i)];
    auto spec = plan(isPs ? "ps" : "worker", index, ports[size_t(i)], httpPort);
    const bool readsCopy = !isPs && dataCopy && !config::synchronous(settings_) &&
                           capacity > 0 && index >= capacity;
    if (readsCopy) spec.argv.insert(spec.argv.end(), {"--data-dir", *dataCopy});
    children.emplace_back(std::move(spec), readsCopy);
  }
  return children;
}

}  // namespace pstrain::app::local
