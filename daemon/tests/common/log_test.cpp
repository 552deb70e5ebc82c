#define BOOST_TEST_MODULE log
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>

#include "pstrain/common/log.hpp"
#include "support/idx_files.hpp"

using namespace pstrain;

namespace {

// A line of 97 characters (with its newline): no buffer size is a multiple of it.
std::string recordLine(int n) {
  std::string line = "{\"n\":" + std::to_string(n) + ",\"pad\":\"";
  return line + std::string(96 - line.size() - 2, 'x') + "\"}";
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_process_killed_mid_run_leaves_whole_lines) {
  testing::TempDir dir;
  const auto path = dir.file("events.jsonl");
  const int lines = 20000;  // ~2 MB: many buffers written out before the kill
  pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    auto record = log::recordFile(path);
    for (int n = 0; n < lines; ++n) record->info("{}", recordLine(n));
    std::raise(SIGKILL);  // no flush: what was buffered is lost, as on the OOM killer's kill
  }
  int status = 0;
  BOOST_REQUIRE_EQUAL(waitpid(child, &status, 0), child);
  BOOST_REQUIRE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  const auto text = readFile(path);
  BOOST_REQUIRE(!text.empty());
  BOOST_CHECK_EQUAL(text.back(), '\n');
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) BOOST_REQUIRE_EQUAL(line, recordLine(n++));
  BOOST_TEST_MESSAGE(n << " of " << lines << " lines written before the kill");
  BOOST_CHECK(n > 0 && n < lines);

  // The next process appends after them.
  {
    auto record = log::recordFile(path);
    record->info("{}", recordLine(n));
    record->flush();
  }
  BOOST_CHECK_EQUAL(readFile(path), text + recordLine(n) + "\n");
}
