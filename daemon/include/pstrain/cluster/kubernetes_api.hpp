#pragma once

#include <chrono>
#include <map>
#include <string>

#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/retry.hpp"

namespace pstrain::cluster {

// The Kubernetes API as a pod reaches it with its ServiceAccount's token.
struct KubernetesApi {
  bool tls = true;  // in a pod, always; plain HTTP only for a test's own server
  net::Endpoint endpoint;
  std::string token;
  std::string caFile;  // the cluster's CA, which signs the API server's certificate (tls)
};

// The API of the cluster this pod runs in: KUBERNETES_SERVICE_HOST and _PORT from `env`, the
// token and ca.crt from `credentialsDir` (the chart's projected volume). Throws ConfigError
// naming what is missing.
KubernetesApi inClusterApi(const std::map<std::string, std::string>& env,
                           const std::string& credentialsDir);

// Every call is retried while the API is unreachable, until `deadline` (UnreachableError); any
// answer but 200 is a refusal (no such object, no permission), a ConfigError naming `what` at
// once. `waiting`, if given, is told of the attempts that failed (net::retryUntil): the caller
// records them.

// GET `path`: the answer's body.
std::string apiGet(const KubernetesApi& api, const std::string& path, const std::string& what,
                   std::chrono::steady_clock::time_point deadline,
                   const net::Waiting& waiting = {});

// Scales StatefulSet `name` in `podNamespace` to 0 replicas (a merge patch of its scale
// subresource): the end of a run releases the pods' resources.
void scaleToZero(const KubernetesApi& api, const std::string& podNamespace,
                 const std::string& name, std::chrono::steady_clock::time_point deadline,
                 const net::Waiting& waiting = {});

}  // namespace pstrain::cluster
