#include "pstrain/observe/status_client.hpp"

#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>

#include <algorithm>
#include <cmath>

#include "pstrain/common/error.hpp"

namespace pstrain::observe {

HttpReply httpRequest(const std::string& host, int port, const std::string& method,
                      const std::string& path, const std::string& body,
                      const std::string& contentType, double timeoutSeconds) {
  const std::string where = "http://" + host + ":" + std::to_string(port) + path;
  try {
    Poco::Net::HTTPClientSession session(host, static_cast<Poco::UInt16>(port));
    session.setTimeout(Poco::Timespan(long(timeoutSeconds * 1e6)));
    Poco::Net::HTTPRequest request(method, path, Poco::Net::HTTPMessage::HTTP_1_1);
    if (!body.empty()) {
      request.setContentType(contentType);
      request.setContentLength64(Poco::Int64(body.size()));
    }
    session.sendRequest(request) << body;
    Poco::Net::HTTPResponse response;
    auto& stream = session.receiveResponse(response);
    HttpReply reply{int(response.getStatus()), {}};
    Poco::StreamCopier::copyToString(stream, reply.body);
    return reply;
  } catch (const Poco::Exception& e) {
    throw UnreachableError("cannot fetch " + where + ": " + e.displayText());
  }
}

StatusSnapshot fetchStatus(const std::string& host, int port, double timeoutSeconds) {
  const std::string where = "http://" + host + ":" + std::to_string(port) + "/status";
  auto reply = httpRequest(host, port, "GET", "/status", "", "", timeoutSeconds);
  if (reply.status != Poco::Net::HTTPResponse::HTTP_OK) {
    throw RefusedError(where + " answered " + std::to_string(reply.status));
  }
  const std::string& body = reply.body;
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
    if (json->has("cut")) status.cutCount = json->getObject("cut")->getValue<std::uint64_t>("count");
    return status;
  } catch (const Poco::Exception& e) {
    throw ProtocolError(where + " is not a pstrain status: " + e.displayText());
  }
}

PredictProbe probePredict(const std::string& host, int port, double timeoutSeconds) {
  std::string image = "0";
  for (int i = 1; i < 784; ++i) image += ",0";
  auto reply = httpRequest(host, port, "POST", "/predict", "{\"images\":[[" + image + "]]}",
                           "application/json", timeoutSeconds);
  std::string answer = reply.body.substr(0, reply.body.find('\n'));
  try {  // a refusal says why in {"error": "..."}
    auto parsed = Poco::JSON::Parser().parse(answer);
    auto object = parsed.extract<Poco::JSON::Object::Ptr>();
    if (object->has("error")) answer = object->getValue<std::string>("error");
  } catch (const Poco::Exception&) {
  }
  return {reply.status, answer};
}

std::string durationText(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  const long wholeSeconds = std::lround(std::max(0.0, seconds));
  if (wholeSeconds < 60) return std::to_string(wholeSeconds) + " s";
  if (wholeSeconds < 3600) {
    return std::to_string(wholeSeconds / 60) + " min " + std::to_string(wholeSeconds % 60) + " s";
  }
  const long wholeMinutes = std::lround(seconds / 60);
  return std::to_string(wholeMinutes / 60) + " h " + std::to_string(wholeMinutes % 60) + " min";
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
    line += ", ETA " + durationText(std::ceil(eta));
  }
  return line;
}

}  // namespace pstrain::observe
