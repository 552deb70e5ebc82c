#include "pstrain/app/summary.hpp"

#include <Poco/JSON/Parser.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::app {

Poco::JSON::Object toJson(const Summary& s) {
  Poco::JSON::Object json(Poco::JSON_PRESERVE_KEY_ORDER);
  json.set("global_step", s.globalStep);
  json.set("test_accuracy", s.testAccuracy);
  json.set("elapsed_s", s.elapsedSeconds);
  json.set("training_elapsed_s", s.trainingElapsedSeconds);
  json.set("global_steps_per_s", s.globalStepsPerSecond());
  json.set("ps", s.ps);
  json.set("workers", s.workers);
  json.set("run_id", s.runId);
  json.set("compute_ms_per_step", s.computeMsPerStep);
  json.set("communication_ms_per_step", s.communicationMsPerStep);
  json.set("waiting_ms_per_step", s.waitingMsPerStep);
  json.set("bytes_per_step", s.bytesPerStep);
  json.set("push_encoding", s.pushEncoding);
  json.set("pull_encoding", s.pullEncoding);
  if (!s.peakRssBytes.empty()) {
    Poco::JSON::Object rss(Poco::JSON_PRESERVE_KEY_ORDER);
    for (const auto& [process, bytes] : s.peakRssBytes) rss.set(process, bytes);
    json.set("peak_rss_bytes", rss);
  }
  json.set("blas_core", s.blasCore);
  return json;
}

Summary summaryFromJson(const std::string& text) {
  try {
    auto json = Poco::JSON::Parser().parse(text).extract<Poco::JSON::Object::Ptr>();
    Summary s;
    s.globalStep = json->getValue<std::uint64_t>("global_step");
    s.testAccuracy = json->getValue<double>("test_accuracy");
    s.elapsedSeconds = json->getValue<double>("elapsed_s");
    s.trainingElapsedSeconds = json->getValue<double>("training_elapsed_s");
    s.ps = json->getValue<int>("ps");
    s.workers = json->getValue<int>("workers");
    s.runId = json->optValue<std::string>("run_id", "");
    s.computeMsPerStep = json->optValue<double>("compute_ms_per_step", 0);
    s.communicationMsPerStep = json->optValue<double>("communication_ms_per_step", 0);
    s.waitingMsPerStep = json->optValue<double>("waiting_ms_per_step", 0);
    s.bytesPerStep = json->optValue<double>("bytes_per_step", 0);
    s.pushEncoding = json->optValue<std::string>("push_encoding", "");
    s.pullEncoding = json->optValue<std::string>("pull_encoding", "");
    s.blasCore = json->optValue<std::string>("blas_core", "");
    return s;
  } catch (const Poco::Exception& e) {
    throw IoError("cannot read a training summary: " + e.displayText());
  }
}

void writeSummary(const Summary& summary, const std::string& path) {
  std::ostringstream text;
  toJson(summary).stringify(text, 2);
  text << "\n";
  writeFileWhenRoom(path, text.str());
}

std::optional<Summary> resultOfRun(const std::string& path, const std::string& runId) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  std::ifstream in(path);
  auto summary = summaryFromJson(
      std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  if (summary.runId != runId) return std::nullopt;
  return summary;
}

std::string describe(const Summary& s) {
  char line[256];
  std::snprintf(line, sizeof line,
                "global step %llu in %.2f s of training (%.0f global steps/s), test accuracy "
                "%.4f; %.2f s in all",
                static_cast<unsigned long long>(s.globalStep), s.trainingElapsedSeconds,
                s.globalStepsPerSecond(), s.testAccuracy, s.elapsedSeconds);
  std::string text = line;
  // A summary written before these were recorded has none.
  if (!s.pushEncoding.empty()) {
    char wire[128];
    std::snprintf(wire, sizeof wire, "; %.1f KB a step on the wire (%s pushes, %s answers)",
                  s.bytesPerStep / 1e3, s.pushEncoding.c_str(), s.pullEncoding.c_str());
    text += wire;
  }
  if (!s.blasCore.empty()) text += "; BLAS kernels: " + s.blasCore;
  return text;
}

}  // namespace pstrain::app
