#include "pstrain/app/pod_api.hpp"

namespace pstrain::app {
namespace {

// Where the chart's projected volume puts the ServiceAccount token and the cluster's CA.
constexpr const char* kCredentialsDir = "/var/run/secrets/pstrain/kubernetes";

}  // namespace

std::string envOr(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

cluster::KubernetesApi podApi(const std::map<std::string, std::string>& env) {
  return cluster::inClusterApi(env, kCredentialsDir);
}

net::Waiting apiWaiting(observe::Events& events, const cluster::KubernetesApi& api) {
  return [&events, endpoint = api.endpoint.toString()](int attempt, const std::string& failure) {
    events.emit(observe::event::apiWaiting(endpoint, attempt, failure));
  };
}

std::chrono::steady_clock::time_point apiDeadline(double peerTimeoutSeconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(peerTimeoutSeconds));
}

}  // namespace pstrain::app
