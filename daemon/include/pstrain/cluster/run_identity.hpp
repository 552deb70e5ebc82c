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

// The metadata.uid of ConfigMap `name` in `podNamespace`: the object a release's install creates
// and a re-apply of the same manifests keeps, so its UID tells a reinstall (a new run) from a
// restart or a re-apply (the same one) wherever the chart was rendered. Retries while the API
// is unreachable, until `deadline` (UnreachableError); a refusal (no such ConfigMap, no
// permission) is a ConfigError at once. `waiting`, if given, is told of the attempts that failed
// (net::retryUntil): the caller records them.
std::string configMapUid(const KubernetesApi& api, const std::string& podNamespace,
                         const std::string& name, std::chrono::steady_clock::time_point deadline,
                         const net::Waiting& waiting = {});

// Scales StatefulSet `name` in `podNamespace` to 0 replicas (a merge patch of its scale
// subresource): the end of a run releases the pods' resources. Retries and refusals as above.
void scaleToZero(const KubernetesApi& api, const std::string& podNamespace,
                 const std::string& name, std::chrono::steady_clock::time_point deadline,
                 const net::Waiting& waiting = {});

}  // namespace pstrain::cluster
