#define BOOST_TEST_MODULE blas_startup
#include <boost/test/unit_test.hpp>

#include <cstdlib>

#include "pstrain/common/blas_core.hpp"
#include "pstrain/common/error.hpp"
#include "support/idx_files.hpp"
#include "support/json.hpp"
#include "support/process_run.hpp"

// The pstrain binary choosing its OpenBLAS kernels at start-up, as a process.

using namespace pstrain::testing;

namespace {

struct SingleRun {
  int exitCode;
  std::string err;
  std::string blasCore;  // from the summary; "" when it wrote none
};

// `pstrain single` for a few steps on a small synthetic data set; `env` are `env`(1) arguments
// that set up its environment.
SingleRun runSingle(const std::vector<std::string>& env) {
  TempDir dir;
  writeSyntheticMnist(dir.path(), 200, 50, false);
  std::vector<std::string> args = env;
  args.insert(args.end(), {pstrainBinary(), "single", "--train-steps", "5", "--batch-size", "20",
                           "--hidden-units", "16", "--data-dir", dir.path(), "--summary-json",
                           dir.file("summary.json")});
  auto result = runCommand("env", args);
  SingleRun run{result.exitCode, result.err, ""};
  const std::string summary = readText(dir.file("summary.json"));
  if (!summary.empty()) {
    run.blasCore = parseObject(summary)->getValue<std::string>("blas_core");
  }
  return run;
}

}  // namespace

BOOST_AUTO_TEST_CASE(nothing_set_computes_with_the_best_level_this_cpu_runs) {
  auto run = runSingle({"-u", "OPENBLAS_CORETYPE"});
  BOOST_REQUIRE(run.exitCode == 0);
  auto cpu = pstrain::readCpuFeatures();
  BOOST_REQUIRE(cpu.has_value());
  BOOST_TEST(run.blasCore != "");
  BOOST_TEST(!pstrain::blasCoreToForce(*cpu, run.blasCore).has_value(),
             run.blasCore << " is weaker than " << *pstrain::bestBlasCore(*cpu));
}

BOOST_AUTO_TEST_CASE(keeps_the_core_the_user_set) {
  // Prescott runs everywhere and is the weakest: pstrain would replace it were it its own choice.
  auto run = runSingle({"OPENBLAS_CORETYPE=Prescott"});
  BOOST_REQUIRE(run.exitCode == 0);
  BOOST_TEST(run.blasCore == "Prescott");
}

BOOST_AUTO_TEST_CASE(refuses_a_set_core_the_cpu_lacks_instead_of_crashing) {
  auto cpu = pstrain::readCpuFeatures();
  BOOST_REQUIRE(cpu.has_value());
  std::string lacking;
  for (const char* core : {"Cooperlake", "SkylakeX", "Bulldozer"}) {
    try {
      pstrain::checkBlasCore(*cpu, core);
    } catch (const pstrain::ConfigError&) {
      lacking = core;
      break;
    }
  }
  BOOST_REQUIRE_MESSAGE(!lacking.empty(), "this CPU runs every core tried");
  auto run = runSingle({"OPENBLAS_CORETYPE=" + lacking});
  BOOST_TEST(run.exitCode == pstrain::kExitConfig);  // not 132: SIGILL
  BOOST_TEST(contains(run.err, "OPENBLAS_CORETYPE=" + lacking + " needs instructions"));
  BOOST_TEST(lines(run.err).size() == 1u);
}

BOOST_AUTO_TEST_CASE(refuses_a_set_name_openblas_does_not_know) {
  auto run = runSingle({"OPENBLAS_CORETYPE=Pentium4"});
  BOOST_TEST(run.exitCode == pstrain::kExitConfig);
  BOOST_TEST(contains(run.err, "OPENBLAS_CORETYPE=Pentium4 is not a core OpenBLAS knows"));
}

BOOST_AUTO_TEST_CASE(starts_itself_once_more_when_openblas_picks_weaker_kernels) {
  auto cpu = pstrain::readCpuFeatures();
  BOOST_REQUIRE(cpu.has_value());
  auto forced = pstrain::blasCoreToForce(*cpu, "Prescott");
  BOOST_REQUIRE_MESSAGE(forced.has_value(), "this CPU runs nothing better than Prescott");
  const char* library = std::getenv("TEST_PRESCOTT_PICK_LIBRARY");
  BOOST_REQUIRE(library != nullptr);

  auto run = runSingle({"-u", "OPENBLAS_CORETYPE", std::string("LD_PRELOAD=") + library});
  BOOST_REQUIRE(run.exitCode == 0);
  BOOST_TEST(run.blasCore == *forced);
  // Two program images in one process: replaced by exec once, not started as a child or looping.
  auto loads = lines(run.err);
  BOOST_REQUIRE_MESSAGE(loads.size() == 2u, run.err);
  BOOST_TEST(loads[0] == loads[1]);
}
