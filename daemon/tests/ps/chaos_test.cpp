#define BOOST_TEST_MODULE chaos
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "pstrain/common/log.hpp"
#include "support/chaos_schedule.hpp"
#include "support/in_process_cluster.hpp"

// Seeded schedules of faults (ChaosSchedule) over runs of 1 to 3 ps and 2 to 4 workers as
// threads, over TCP through a fault proxy in front of each ps: kill -9 and SIGTERM of a ps,
// pauses of a ps or a worker, resets, black holes, latency, a byte at a time, re-cuts, workers
// leaving and joining. Each run must end with every ps of its cut and every worker left at
// exactly trainSteps, and its history (observe::HistoryRecorder) must hold no violated invariant
// (history_checker). Seeds 1 to 10; PSTRAIN_CHAOS_SEEDS=first:last picks others
// (tests/bench/chaos.sh runs hundreds), and PSTRAIN_CHAOS_LOG=1 prints the ps's and workers' log
// lines, which tell what a failing seed met.

using namespace pstrain;
using namespace pstrain::testing;

namespace {

// The seeds to run, first and last.
std::pair<std::uint64_t, std::uint64_t> seeds() {
  const char* chosen = std::getenv("PSTRAIN_CHAOS_SEEDS");
  if (!chosen) return {1, 10};
  const std::string text(chosen);
  const auto colon = text.find(':');
  const auto first = std::stoull(text.substr(0, colon));
  return {first, colon == std::string::npos ? first : std::stoull(text.substr(colon + 1))};
}

struct LogLines {
  LogLines() {
    if (std::getenv("PSTRAIN_CHAOS_LOG")) log::initConsole();
  }
};
BOOST_TEST_GLOBAL_FIXTURE(LogLines);

}  // namespace

BOOST_DATA_TEST_CASE(a_seeded_schedule_of_faults_ends_at_exactly_train_steps_with_a_sound_history,
                     boost::unit_test::data::xrange(seeds().first, seeds().second + 1), seed) {
  const ChaosSchedule schedule(seed);
  BOOST_TEST_MESSAGE(schedule.describe());
  BOOST_TEST_CONTEXT(schedule.describe()) {
    InProcessCluster cluster(Transport::kTcpThroughProxy, schedule.flags());
    std::map<int, worker::TrainingResult> results;
    try {
      schedule.play(cluster);
      results = cluster.joinWorkers();  // throws naming a worker whose training failed
    } catch (const std::exception& e) {
      BOOST_FAIL(e.what());
    }
    // The ps of the cut that ps 0 serves at the end: those a re-cut left out stopped short.
    const int cut = cluster.server(0).cut().psCount;
    for (int i = 0; i < cut; ++i) {
      BOOST_TEST(cluster.server(i).globalStep() == schedule.trainSteps(), "ps " << i);
    }
    BOOST_TEST(!results.empty());
    for (const auto& [index, result] : results) {
      BOOST_TEST(result.globalStep == schedule.trainSteps(), "worker " << index);
    }
    // And what every ps and worker recorded on the way holds no violated invariant.
    const auto violations = cluster.checkHistory();
    for (const auto& violation : violations) BOOST_ERROR(violation);
  }
}
