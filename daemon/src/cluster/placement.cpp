#include "pstrain/cluster/placement.hpp"

#include <regex>

#include "pstrain/common/error.hpp"

namespace pstrain::cluster {

std::optional<PodName> parsePodName(const std::string& name) {
  static const std::regex pattern("^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)-(ps|worker)-([0-9]{1,5})$");
  std::smatch match;
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  return PodName{match[1], match[3] == "ps" ? Role::kPs : Role::kWorker, std::stoi(match[4])};
}

std::vector<net::Endpoint> psEndpoints(const std::string& prefix, const std::string& service, int count,
                                  int port, const std::string& podNamespace,
                                  const std::string& clusterDomain) {
  std::string suffix = "." + service;
  if (!clusterDomain.empty()) suffix += "." + podNamespace + ".svc." + clusterDomain;
  std::vector<net::Endpoint> endpoints;
  for (int i = 0; i < count; ++i) {
    endpoints.push_back(net::Endpoint{prefix + "-ps-" + std::to_string(i) + suffix, port});
  }
  return endpoints;
}

Placement place(const config::Config& config, const std::string& hostname,
                const std::string& podNamespace) {
  const std::string& name = config.podName.empty() ? hostname : config.podName;
  auto pod = parsePodName(name);
  if ((!config.role || !config.index) && !pod) {
    throw ConfigError("cannot tell role and index from pod name '" + name +
                      "': expected <prefix>-ps-<n> or <prefix>-worker-<n>, or set --role and "
                      "--index");
  }
  Placement placement{config.role.value_or(pod ? pod->role : Role::kPs),
                      config.index.value_or(pod ? pod->ordinal : 0), 0, {}};
  // Any worker index: workers join and leave during a run (a StatefulSet scaled up has pods
  // the configuration never counted). A ps beyond the run's ps is one leaving it: it serves its
  // checkpoint until worker 0 has cut it out, and has no place without one (ps::Server).
  placement.listenPort = placement.role == Role::kPs ? config.psPort : config.workerPort;

  if (!config.psHosts.empty()) {
    for (const auto& host : config.psHosts) placement.ps.push_back(net::parseEndpoint(host));
  } else if (pod) {
    if (!config.clusterDomain.empty() && podNamespace.empty()) {
      throw ConfigError("clusterDomain is set but POD_NAMESPACE is not: the FQDN needs both");
    }
    std::string service = config.psService.empty() ? pod->prefix + "-ps" : config.psService;
    placement.ps = psEndpoints(pod->prefix, service, config.ps, config.psPort, podNamespace,
                               config.clusterDomain);
  } else {
    throw ConfigError("no ps addresses: set psHosts, or run under a pod name "
                      "<prefix>-<role>-<n> so the ps DNS names can be derived");
  }
  return placement;
}

}  // namespace pstrain::cluster
