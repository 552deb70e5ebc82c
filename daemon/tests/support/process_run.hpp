#pragma once

#include <string>
#include <vector>

namespace pstrain::testing {

struct ProcessResult {
  int exitCode;
  std::string out;
  std::string err;
};

// The pstrain binary under test (ctest passes its path in TEST_PSTRAIN_BINARY).
std::string pstrainBinary();

// Runs `command` (looked up in PATH) with `args` to completion, bounded by `timeoutSeconds`.
ProcessResult runCommand(const std::string& command, const std::vector<std::string>& args,
                         int timeoutSeconds = 120);

// Runs pstrain with `args` to completion, bounded by `timeoutSeconds`, capturing its output.
ProcessResult runPstrain(const std::vector<std::string>& args, int timeoutSeconds = 120);

std::string readText(const std::string& path);
std::vector<std::string> lines(const std::string& text);

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace pstrain::testing
