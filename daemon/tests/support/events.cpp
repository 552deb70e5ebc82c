#include "support/events.hpp"
#include "support/json.hpp"

#include <algorithm>
#include <filesystem>

#include "pstrain/observe/events.hpp"
#include "support/process_run.hpp"

namespace pstrain::testing {

namespace {

std::string eventsPath(const std::string& logDir) { return logDir + "/" + observe::kEventsFile; }

// How an event's name appears in its line, as Events writes it.
std::string nameField(const std::string& event) { return "\"event\":\"" + event + "\""; }

}  // namespace

std::vector<Poco::JSON::Object::Ptr> eventsOf(const std::string& logDir, const std::string& event) {
  const auto path = eventsPath(logDir);
  if (!std::filesystem::exists(path)) return {};
  auto all = observe::readEvents(path);
  std::vector<Poco::JSON::Object::Ptr> named;
  std::copy_if(all.begin(), all.end(), std::back_inserter(named), [&](const auto& e) {
    return e->template optValue<std::string>("event", "") == event;
  });
  return named;
}

Poco::JSON::Object::Ptr lastEventOf(const std::string& logDir, const std::string& event) {
  const std::string text = readText(eventsPath(logDir));
  const auto field = nameField(event);
  for (auto end = text.size(); end > 0;) {
    const auto start = text.rfind('\n', end - 1);
    const auto begin = start == std::string::npos ? 0 : start + 1;
    const std::string line = text.substr(begin, end - begin);
    if (line.find(field) != std::string::npos) {
      try {
        return parseObject(line);
      } catch (const Poco::Exception&) {
        // a partial last line: look further back
      }
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return nullptr;
}

std::uint64_t highestStep(const std::vector<Poco::JSON::Object::Ptr>& events) {
  std::uint64_t highest = 0;
  for (const auto& e : events) highest = std::max(highest, e->optValue<std::uint64_t>("step", 0));
  return highest;
}

}  // namespace pstrain::testing
