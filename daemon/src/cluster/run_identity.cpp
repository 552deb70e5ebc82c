#include "pstrain/cluster/run_identity.hpp"

#include <Poco/JSON/Parser.h>

#include "pstrain/common/error.hpp"

namespace pstrain::cluster {

std::string configMapUid(const KubernetesApi& api, const std::string& podNamespace,
                         const std::string& name, std::chrono::steady_clock::time_point deadline,
                         const net::Waiting& waiting) {
  const std::string what = "ConfigMap " + podNamespace + "/" + name;
  const std::string body =
      apiGet(api, "/api/v1/namespaces/" + podNamespace + "/configmaps/" + name,
             "to read " + what, deadline, waiting);
  try {
    return Poco::JSON::Parser()
        .parse(body)
        .extract<Poco::JSON::Object::Ptr>()
        ->getObject("metadata")
        ->getValue<std::string>("uid");
  } catch (const std::exception&) {  // not JSON, or no such field (Poco's or std::bad_cast)
    throw ConfigError("the Kubernetes API's answer for " + what + " holds no metadata.uid");
  }
}

}  // namespace pstrain::cluster
