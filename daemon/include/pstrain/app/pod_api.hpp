#pragma once

#include <chrono>
#include <map>
#include <string>

#include "pstrain/cluster/kubernetes_api.hpp"
#include "pstrain/net/retry.hpp"
#include "pstrain/observe/events.hpp"

namespace pstrain::app {

// The value of environment variable `name` in `env`; "" where it is not set.
std::string envOr(const std::map<std::string, std::string>& env, const char* name);

// The Kubernetes API as this pod reaches it: the token and CA where the chart's projected volume
// puts them. Throws ConfigError outside a pod.
cluster::KubernetesApi podApi(const std::map<std::string, std::string>& env);

// A wait for the Kubernetes API at `api`, recorded as an event (whose line logs it).
net::Waiting apiWaiting(observe::Events& events, const cluster::KubernetesApi& api);

// How long from now a call to the API may keep retrying: the peer timeout.
std::chrono::steady_clock::time_point apiDeadline(double peerTimeoutSeconds);

}  // namespace pstrain::app
