#pragma once

#include <Poco/JSON/Object.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace pstrain::app {

// What a finished training reports: worker 0 writes it as result.json in its log dir, and
// `local` and `single` print it and write it with --summary-json.
struct Summary {
  std::uint64_t globalStep = 0;
  double testAccuracy = 0;
  double elapsedSeconds = 0;          // from the command's start to the end, data loading included
  double trainingElapsedSeconds = 0;  // the training loop alone
  int ps = 0;
  int workers = 0;
  std::string runId;  // the run's configuration fingerprint
  // Worker 0's training steps, on average: where the time went and the bytes it moved.
  double computeMsPerStep = 0;
  double communicationMsPerStep = 0;
  double waitingMsPerStep = 0;
  double bytesPerStep = 0;  // sent and received, counted from the frames
  std::string pushEncoding, pullEncoding;  // on the wire (net::WireEncoding's names)
  std::map<std::string, std::uint64_t> peakRssBytes;  // per process ("ps-0", ...), from local
  std::string blasCore;  // the OpenBLAS kernels the training computed with

  double globalStepsPerSecond() const {
    return trainingElapsedSeconds > 0 ? double(globalStep) / trainingElapsedSeconds : 0;
  }
};

Poco::JSON::Object toJson(const Summary& summary);
Summary summaryFromJson(const std::string& text);
void writeSummary(const Summary& summary, const std::string& path);
// Worker 0's result of run `runId` at `path` (its result.json), if it has written one.
std::optional<Summary> resultOfRun(const std::string& path, const std::string& runId);
std::string describe(const Summary& summary);

}  // namespace pstrain::app
