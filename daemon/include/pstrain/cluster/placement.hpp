#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pstrain/config/config.hpp"
#include "pstrain/net/endpoint.hpp"

namespace pstrain::cluster {

// A StatefulSet pod name, `<prefix>-<role>-<ordinal>`, taken apart.
struct PodName {
  std::string prefix;
  Role role;
  int ordinal;
};

std::optional<PodName> parsePodName(const std::string& name);

// `<prefix>-ps-<i>.<service>` for every ps, or the FQDN
// `<prefix>-ps-<i>.<service>.<namespace>.svc.<domain>` when a domain is given.
std::vector<net::Endpoint> psEndpoints(const std::string& prefix, const std::string& service, int count,
                                  int port, const std::string& podNamespace,
                                  const std::string& clusterDomain);

// Where this process stands: its role and index, its listening port and the ps it talks to.
struct Placement {
  Role role;
  int index;
  int listenPort;
  std::vector<net::Endpoint> ps;
};

// Role and index from the flags, else from the pod name; peers from psHosts, else from the
// headless-Service DNS names. Throws ConfigError when neither source is usable.
Placement place(const config::Config& config, const std::string& hostname,
                const std::string& podNamespace);

}  // namespace pstrain::cluster
