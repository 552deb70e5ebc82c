#define BOOST_TEST_MODULE run_identity
#include <boost/test/unit_test.hpp>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "pstrain/cluster/kubernetes_api.hpp"
#include "pstrain/cluster/run_identity.hpp"
#include "pstrain/common/error.hpp"
#include "support/idx_files.hpp"

// The run id from a ConfigMap's UID, read from an API server on loopback that answers as
// Kubernetes does: the object for the right path and token, 404 for another name, 403 without
// the token.

using namespace pstrain;
using namespace pstrain::cluster;

namespace {

constexpr const char* kToken = "token-of-the-release";
constexpr const char* kUid = "6f1c2b8e-3d4a-4b6e-9f0a-1c2d3e4f5a6b";

// The bodies of the scale patches the server was sent.
std::vector<std::string> patches;

class ApiServer final : public Poco::Net::HTTPRequestHandler {
 public:
  void handleRequest(Poco::Net::HTTPServerRequest& request,
                     Poco::Net::HTTPServerResponse& response) override {
    if (request.get("Authorization", "") != std::string("Bearer ") + kToken) {
      response.setStatusAndReason(Poco::Net::HTTPResponse::HTTP_FORBIDDEN);
      response.send() << R"({"kind":"Status","reason":"Forbidden"})";
    } else if (request.getMethod() == "PATCH" &&
               request.getURI() == "/apis/apps/v1/namespaces/train/statefulsets/mnist-ps/scale" &&
               request.getContentType() == "application/merge-patch+json") {
      std::string patch(std::istreambuf_iterator<char>(request.stream()), {});
      patches.push_back(patch);
      response.setContentType("application/json");
      response.send() << R"({"kind":"Scale","spec":{"replicas":0}})";
    } else if (request.getURI() != "/api/v1/namespaces/train/configmaps/mnist-config") {
      response.setStatusAndReason(Poco::Net::HTTPResponse::HTTP_NOT_FOUND);
      response.send() << R"({"kind":"Status","reason":"NotFound"})";
    } else {
      response.setContentType("application/json");
      response.send() << R"({"kind":"ConfigMap","metadata":{"name":"mnist-config","uid":")"
                      << kUid << R"("},"data":{}})";
    }
  }
};

struct Handlers final : Poco::Net::HTTPRequestHandlerFactory {
  Poco::Net::HTTPRequestHandler* createRequestHandler(const Poco::Net::HTTPServerRequest&) override {
    return new ApiServer;
  }
};

struct LoopbackApi {
  Poco::Net::HTTPServer server{new Handlers, Poco::Net::ServerSocket(Poco::Net::SocketAddress("127.0.0.1", 0)),
                               new Poco::Net::HTTPServerParams};
  LoopbackApi() { server.start(); }
  ~LoopbackApi() { server.stopAll(true); }
  KubernetesApi api(const std::string& token) const {
    return {false, {"127.0.0.1", int(server.port())}, token, ""};
  }
};

auto soon() { return std::chrono::steady_clock::now() + std::chrono::seconds(5); }

}  // namespace

BOOST_AUTO_TEST_CASE(the_run_id_is_the_uid_of_the_release_configmap) {
  LoopbackApi loopback;
  BOOST_TEST(configMapUid(loopback.api(kToken), "train", "mnist-config", soon()) == kUid);
}

BOOST_AUTO_TEST_CASE(a_configmap_that_is_not_there_is_refused_at_once_naming_it) {
  LoopbackApi loopback;
  const auto start = std::chrono::steady_clock::now();
  try {
    configMapUid(loopback.api(kToken), "train", "other-config", soon());
    BOOST_FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "the Kubernetes API refused to read ConfigMap train/other-config: HTTP 404 Not Found");
  }
  BOOST_TEST((std::chrono::steady_clock::now() - start < std::chrono::seconds(2)));
}

BOOST_AUTO_TEST_CASE(scaling_to_zero_patches_the_statefulsets_scale) {
  LoopbackApi loopback;
  patches.clear();
  scaleToZero(loopback.api(kToken), "train", "mnist-ps", soon());
  BOOST_TEST(patches == std::vector<std::string>{R"({"spec":{"replicas":0}})"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(scaling_another_statefulset_is_refused_naming_it) {
  LoopbackApi loopback;
  try {
    scaleToZero(loopback.api(kToken), "train", "other-ps", soon());
    BOOST_FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "the Kubernetes API refused to scale StatefulSet train/other-ps to 0: HTTP 404 Not Found");
  }
}

BOOST_AUTO_TEST_CASE(a_token_without_the_permission_is_refused) {
  LoopbackApi loopback;
  BOOST_CHECK_THROW(configMapUid(loopback.api("another"), "train", "mnist-config", soon()),
                    ConfigError);
}

BOOST_AUTO_TEST_CASE(an_api_that_is_not_there_is_unreachable_at_the_deadline) {
  int port;
  {
    LoopbackApi gone;
    port = int(gone.server.port());
  }
  const KubernetesApi api{false, {"127.0.0.1", port}, kToken, ""};
  BOOST_CHECK_THROW(configMapUid(api, "train", "mnist-config",
                                 std::chrono::steady_clock::now() + std::chrono::milliseconds(300)),
                    UnreachableError);
}

BOOST_AUTO_TEST_CASE(in_a_pod_the_api_is_the_kubernetes_service_with_the_mounted_token) {
  pstrain::testing::TempDir credentials;
  std::ofstream(credentials.file("token")) << kToken << "\n";
  auto api = inClusterApi({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
                          credentials.path());
  BOOST_TEST(api.tls);
  BOOST_TEST(api.endpoint.toString() == "10.96.0.1:443");
  BOOST_TEST(api.token == kToken);
  BOOST_TEST(api.caFile == credentials.file("ca.crt"));
  BOOST_CHECK_THROW(inClusterApi({}, credentials.path()), ConfigError);
}
