#include "pstrain/app/completion_record.hpp"

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::app {
namespace {

std::string recordPath(const std::string& dir) { return dir + "/completed.json"; }

}  // namespace

std::optional<std::uint64_t> completedGlobalStep(const std::string& dir, std::uint64_t runId) {
  std::ifstream in(recordPath(dir));
  if (!in) return std::nullopt;
  try {
    auto json = Poco::JSON::Parser().parse(in).extract<Poco::JSON::Object::Ptr>();
    if (json->getValue<std::string>("run_id") != std::to_string(runId)) return std::nullopt;
    return json->getValue<std::uint64_t>("global_step");
  } catch (const Poco::Exception& e) {
    // Training the run again could overwrite a finished model: say so instead, as for a
    // corrupt checkpoint.
    throw IoError("completion record " + recordPath(dir) + " cannot be read (" +
                  e.displayText() + "); move it away to train this run again");
  }
}

void recordCompletion(const std::string& dir, std::uint64_t runId, std::uint64_t globalStep) {
  Poco::JSON::Object json;
  json.set("run_id", std::to_string(runId));  // as text: JSON numbers lose 64-bit precision
  json.set("global_step", globalStep);
  std::ostringstream text;
  json.stringify(text);
  std::filesystem::create_directories(dir);
  writeFileWhenRoom(recordPath(dir), text.str() + "\n");
}

}  // namespace pstrain::app
