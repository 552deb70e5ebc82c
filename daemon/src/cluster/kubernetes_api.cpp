#include "pstrain/cluster/kubernetes_api.hpp"

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>

#include <cctype>
#include <fstream>
#include <memory>
#include <sstream>

#include "pstrain/common/error.hpp"
#include "pstrain/net/retry.hpp"

namespace pstrain::cluster {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<Poco::Net::HTTPClientSession> session(const KubernetesApi& api) {
  const auto port = Poco::UInt16(api.endpoint.port);
  if (!api.tls) return std::make_unique<Poco::Net::HTTPClientSession>(api.endpoint.host, port);
  Poco::Net::Context::Ptr context(new Poco::Net::Context(
      Poco::Net::Context::TLS_CLIENT_USE, "", "", api.caFile, Poco::Net::Context::VERIFY_STRICT));
  return std::make_unique<Poco::Net::HTTPSClientSession>(api.endpoint.host, port, context);
}

}  // namespace

KubernetesApi inClusterApi(const std::map<std::string, std::string>& env,
                           const std::string& credentialsDir) {
  auto host = env.find("KUBERNETES_SERVICE_HOST");
  auto port = env.find("KUBERNETES_SERVICE_PORT");
  if (host == env.end() || port == env.end()) {
    throw ConfigError("KUBERNETES_SERVICE_HOST and _PORT are not set: not in a Kubernetes pod");
  }
  std::string token = readFile(credentialsDir + "/token");
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  return {true, net::parseEndpoint(host->second + ":" + port->second), token,
          credentialsDir + "/ca.crt"};
}

namespace {

// One request to the API, retried and refused as the header says. Returns the answer's body.
std::string call(const KubernetesApi& api, const std::string& method, const std::string& path,
                 const std::string& patch, const std::string& what,
                 std::chrono::steady_clock::time_point deadline, const net::Waiting& waiting) {
  std::string body;
  net::retryUntil(api.endpoint, deadline, [&] {
    Poco::Net::HTTPResponse response;
    try {
      auto client = session(api);
      client->setTimeout(Poco::Timespan(5, 0));
      Poco::Net::HTTPRequest request(method, path, Poco::Net::HTTPMessage::HTTP_1_1);
      request.set("Authorization", "Bearer " + api.token);
      request.set("Accept", "application/json");
      if (!patch.empty()) {
        request.setContentType("application/merge-patch+json");
        request.setContentLength(std::streamsize(patch.size()));
      }
      client->sendRequest(request) << patch;
      std::stringstream text;
      text << client->receiveResponse(response).rdbuf();
      body = text.str();
    } catch (const Poco::Exception& e) {
      throw UnreachableError("the Kubernetes API, " + what + ": " + e.displayText());
    }
    if (response.getStatus() != Poco::Net::HTTPResponse::HTTP_OK) {
      // 403: the Role that allows it is missing; 404: the object is not there.
      throw ConfigError("the Kubernetes API refused " + what + ": HTTP " +
                        std::to_string(int(response.getStatus())) + " " + response.getReason());
    }
  }, waiting);
  return body;
}

}  // namespace

std::string apiGet(const KubernetesApi& api, const std::string& path, const std::string& what,
                   std::chrono::steady_clock::time_point deadline, const net::Waiting& waiting) {
  return call(api, Poco::Net::HTTPRequest::HTTP_GET, path, "", what, deadline, waiting);
}

void scaleToZero(const KubernetesApi& api, const std::string& podNamespace,
                 const std::string& name, std::chrono::steady_clock::time_point deadline,
                 const net::Waiting& waiting) {
  call(api, Poco::Net::HTTPRequest::HTTP_PATCH,
       "/apis/apps/v1/namespaces/" + podNamespace + "/statefulsets/" + name + "/scale",
       R"({"spec":{"replicas":0}})", "to scale StatefulSet " + podNamespace + "/" + name + " to 0",
       deadline, waiting);
}

}  // namespace pstrain::cluster
