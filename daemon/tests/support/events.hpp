#pragma once

#include <Poco/JSON/Object.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain::testing {

// The events named `event` that the process logging to `logDir` has written to its
// events.jsonl, in order; none while the file does not exist.
std::vector<Poco::JSON::Object::Ptr> eventsOf(const std::string& logDir, const std::string& event);

// The last event named `event` in `logDir`'s events.jsonl, or null: cheap enough to poll, as
// only that line is parsed.
Poco::JSON::Object::Ptr lastEventOf(const std::string& logDir, const std::string& event);

// The highest "step" of those events, 0 when there are none.
std::uint64_t highestStep(const std::vector<Poco::JSON::Object::Ptr>& events);

}  // namespace pstrain::testing
