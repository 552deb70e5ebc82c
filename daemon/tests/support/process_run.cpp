#include "support/process_run.hpp"

#include <Poco/PipeStream.h>
#include <Poco/Process.h>
#include <Poco/StreamCopier.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace pstrain::testing {

std::string pstrainBinary() {
  const char* path = std::getenv("TEST_PSTRAIN_BINARY");
  if (!path) throw std::runtime_error("TEST_PSTRAIN_BINARY is not set (run the tests through ctest)");
  return path;
}

ProcessResult runPstrain(const std::vector<std::string>& args, int timeoutSeconds) {
  return runCommand(pstrainBinary(), args, timeoutSeconds);
}

ProcessResult runCommand(const std::string& program, const std::vector<std::string>& args,
                         int timeoutSeconds) {
  std::vector<std::string> command{std::to_string(timeoutSeconds), program};
  command.insert(command.end(), args.begin(), args.end());
  Poco::Pipe out;
  Poco::Pipe err;
  auto handle = Poco::Process::launch("timeout", command, nullptr, &out, &err);
  ProcessResult result{};
  // Both pipes are drained at once so that neither can fill up and stall the child.
  std::thread errReader([&] {
    Poco::PipeInputStream stream(err);
    Poco::StreamCopier::copyToString(stream, result.err);
  });
  Poco::PipeInputStream outStream(out);
  Poco::StreamCopier::copyToString(outStream, result.out);
  errReader.join();
  result.exitCode = handle.wait();
  return result;
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    if (!line.empty()) result.push_back(line);
  }
  return result;
}

}  // namespace pstrain::testing
