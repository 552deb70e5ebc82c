#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pstrain::observe {

// One process's /status, as fetched over HTTP.
struct StatusSnapshot {
  std::string role;
  int ordinal = 0;
  std::string state;
  std::uint64_t globalStep = 0;
  std::uint64_t trainSteps = 0;
  double stepsPerSecond = 0;
  std::optional<double> loss;
  std::optional<double> testAccuracy;
  std::vector<std::string> peers;
  // A ps: how many parameters its cut serves (0: a re-cut has left it out of the run).
  std::optional<std::uint64_t> cutCount;
};

struct HttpReply {
  int status = 0;
  std::string body;
};

// One HTTP request to http://host:port/path, with `body` (of `contentType`) when not empty;
// throws UnreachableError when nothing answers.
HttpReply httpRequest(const std::string& host, int port, const std::string& method,
                      const std::string& path, const std::string& body,
                      const std::string& contentType, double timeoutSeconds);

// GET http://host:port/status; throws UnreachableError when it cannot be fetched, RefusedError
// for an HTTP error status, ProtocolError when the answer is not a status.
StatusSnapshot fetchStatus(const std::string& host, int port, double timeoutSeconds = 2);

// What /predict answers for a blank image: the HTTP status and the first line of the body.
struct PredictProbe {
  int status = 0;
  std::string answer;
};

// POST a blank image to http://host:port/predict; throws UnreachableError when nothing answers.
PredictProbe probePredict(const std::string& host, int port, double timeoutSeconds = 5);

// A duration as the page writes one: "42 s", "3 min 5 s", "2 h 7 min". It is rounded once, to
// the unit written last, and then split, so that no part reads 60 (119.6 s is "2 min 0 s").
std::string durationText(double seconds);

// "training: global step 1234/3000 (41%), 1002 steps/s, loss 0.4321, accuracy 0.8512, ETA 2 s";
// the ETA in whole seconds rounded up, written by durationText ("ETA 3 min 20 s").
std::string describeProgress(const StatusSnapshot& status);

}  // namespace pstrain::observe
