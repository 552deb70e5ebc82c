#pragma once

#include <chrono>
#include <string>

#include "pstrain/cluster/kubernetes_api.hpp"

namespace pstrain::cluster {

// The metadata.uid of ConfigMap `name` in `podNamespace`: the object a release's install creates
// and a re-apply of the same manifests keeps, so its UID tells a reinstall (a new run) from a
// restart or a re-apply (the same one) wherever the chart was rendered. Retries and refusals as
// every API call (kubernetes_api.hpp).
std::string configMapUid(const KubernetesApi& api, const std::string& podNamespace,
                         const std::string& name, std::chrono::steady_clock::time_point deadline,
                         const net::Waiting& waiting = {});

}  // namespace pstrain::cluster
