#include "pstrain/observe/status_client.hpp"

#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>

#include <cmath>

#include "pstrain/common/error.hpp"

namespace pstrain::observe {

StatusSnapshot fetchStatus(const std::string& host, int port, double timeoutSeconds) {
  const std::string where = "http://" + host + ":" + std::to_string(port) + "/status";
  std::string body;
  try {
    Poco::Net::HTTPClientSession session(host, static_cast<Poco::UInt16>(port));
    session.setTimeout(Poco::Timespan(long(timeoutSeconds * 1e6)));
    Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_GET, "/status");
    session.sendRequest(request);
    Poco::Net::HTTPResponse response;
    auto& stream = session.receiveResponse(response);
    Poco::StreamCopier::copyToString(stream, body);
    if (response.getStatus() != Poco::Net::HTTPResponse::HTTP_OK) {
      throw PeerError(where + " answered " + std::to_string(int(response.getStatus())));
    }
  } catch (const Poco::Exception& e) {
    throw PeerError("cannot fetch " + where + ": " + e.displayText());
  }
  try {
    auto json = Poco::JSON::Parser().parse(body).extract<Poco::JSON::Object::Ptr>();
    StatusSnapshot status;
    status.role = json->getValue<std::string>("role");
    status.ordinal = json->getValue<int>("ordinal");
    status.state = json->getValue<std::string>("state");
    status.globalStep = json->getValue<std::uint64_t>("global_step");
    status.trainSteps = json->getValue<std::uint64_t>("train_steps");
    status.stepsPerSecond = json->getValue<double>("steps_per_second");
    if (json->has("loss")) status.loss = json->getValue<double>("loss");
    if (json->has("test_accuracy")) status.testAccuracy = json->getValue<double>("test_accuracy");
    for (const auto& peer : *json->getArray("peers")) status.peers.push_back(peer.toString());
    return status;
  } catch (const Poco::Exception& e) {
    throw PeerError(where + " is not a pstrain status: " + e.displayText());
  }
}

std::string describeProgress(const StatusSnapshot& s) {
  char text[256];
  double percent = s.trainSteps ? 100.0 * double(s.globalStep) / double(s.trainSteps) : 0;
  int length = std::snprintf(text, sizeof text, "%s: global step %llu/%llu (%.0f%%), %.0f steps/s",
                             s.state.c_str(), static_cast<unsigned long long>(s.globalStep),
                             static_cast<unsigned long long>(s.trainSteps), percent,
                             s.stepsPerSecond);
  std::string line(text, size_t(length));
  if (s.loss) line += ", loss " + std::to_string(*s.loss).substr(0, 6);
  if (s.testAccuracy) line += ", accuracy " + std::to_string(*s.testAccuracy).substr(0, 6);
  if (s.state == "training" && s.stepsPerSecond > 0 && s.trainSteps > s.globalStep) {
    double eta = double(s.trainSteps - s.globalStep) / s.stepsPerSecond;
    line += ", ETA " + std::to_string(long(std::ceil(eta))) + " s";
  }
  return line;
}

}  // namespace pstrain::observe
