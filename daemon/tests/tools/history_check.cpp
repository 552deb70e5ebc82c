// history_check DIR...: checks the run histories under the directories (HistoryRecorder files,
// found recursively) and prints each violation on a line of its own. Exit status: 0 no violation,
// 1 violations, 2 unreadable input or no history at all.
#include <iostream>
#include <string>
#include <vector>

#include "pstrain/common/error.hpp"
#include "support/history_checker.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: history_check DIR...\n";
    return 2;
  }
  const std::vector<std::string> dirs(argv + 1, argv + argc);
  std::vector<pstrain::observe::HistorySegment> segments;
  try {
    segments = pstrain::testing::readHistories(dirs);
  } catch (const pstrain::Error& e) {
    std::cerr << "history_check: " << e.what() << "\n";
    return 2;
  }
  if (segments.empty()) {
    std::cerr << "history_check: no history under the directories given\n";
    return 2;
  }
  const auto violations = pstrain::testing::checkHistories(segments);
  for (const auto& violation : violations) std::cout << violation << "\n";
  std::cerr << "history_check: " << segments.size() << " process histories, "
            << violations.size() << " violations\n";
  return violations.empty() ? 0 : 1;
}
