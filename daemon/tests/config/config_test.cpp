#define BOOST_TEST_MODULE config
#include <boost/test/unit_test.hpp>

#include "pstrain/common/error.hpp"
#include "pstrain/config/config.hpp"
#include "support/idx_files.hpp"
#include "support/process_run.hpp"

using pstrain::ConfigError;
using pstrain::config::load;
using pstrain::config::Sources;
using pstrain::testing::contains;

namespace {

std::string errorOf(const Sources& sources) {
  try {
    load(sources);
  } catch (const ConfigError& e) {
    return e.what();
  }
  BOOST_FAIL("expected a ConfigError");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(defaults_apply_when_nothing_is_set) {
  auto config = load({});
  BOOST_TEST(config.ps == 1);
  BOOST_TEST(config.batchSize == 100);
  BOOST_TEST(config.hiddenUnits == std::vector<int>{128});
  BOOST_TEST(config.logDir == "/tmp/mnist-log");
  BOOST_TEST((config.consistency == pstrain::config::Consistency::kAuto));
  BOOST_TEST(!config.role.has_value());
}

// pstrain local lets every worker compute at once (and so trains in sync) where every ps and
// worker has a CPU of its own; else as many as the CPUs, asynchronously.
BOOST_AUTO_TEST_CASE(shared_cpus_bound_the_workers_computing_at_once_when_too_few) {
  using pstrain::config::concurrentWorkers;
  BOOST_TEST(concurrentWorkers(load({{"--ps", "2", "--workers", "2"}, {}}), 2) == 2);
  BOOST_TEST(concurrentWorkers(load({{"--ps", "2", "--workers", "8"}, {}}), 2) == 2);
  BOOST_TEST(concurrentWorkers(load({{"--ps", "4", "--workers", "12"}, {}}), 16) == 0);
  BOOST_TEST(concurrentWorkers(load({{"--ps", "4", "--workers", "13"}, {}}), 16) == 16);
  BOOST_TEST(concurrentWorkers(load({{"--ps", "4", "--workers", "13"}, {}})) == 0);  // pods
  BOOST_TEST(concurrentWorkers(load({{"--workers", "8", "--concurrent-workers", "3"}, {}}), 2) == 3);
}

// Auto is sync where every worker computes at once, asynchronous within a configured bound.
BOOST_AUTO_TEST_CASE(auto_consistency_is_sync_unless_the_workers_are_bounded) {
  using pstrain::config::synchronous;
  BOOST_TEST(synchronous(load({})));
  BOOST_TEST(synchronous(load({{"--concurrent-workers", "0"}, {}})));
  BOOST_TEST(!synchronous(load({{"--concurrent-workers", "2"}, {}})));
  BOOST_TEST(synchronous(load({{"--concurrent-workers", "2", "--sync"}, {}})));
  BOOST_TEST(!synchronous(load({{"--sync", "false"}, {}})));
  BOOST_TEST(synchronous(load({{"--sync", "auto"}, {}})));
  BOOST_TEST(contains(errorOf({{"--sync", "maybe"}, {}}), "true, false or auto"));
}

BOOST_AUTO_TEST_CASE(flags_beat_environment_beat_file_beat_defaults) {
  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("c.yaml"),
                              "batchSize: 10\nlearningRate: 0.5\ntrainSteps: 7\nworkers: 3\n");
  Sources sources;
  sources.args = {"--config", dir.file("c.yaml"), "--batch-size", "30"};
  sources.env = {{"PSTRAIN_BATCH_SIZE", "20"}, {"PSTRAIN_LEARNING_RATE", "0.25"},
                 {"HOME", "/root"}};
  auto config = load(sources);
  BOOST_TEST(config.batchSize == 30);        // flag over env and file
  BOOST_TEST(config.learningRate == 0.25);   // env over file
  BOOST_TEST(config.trainSteps == 7);        // file over default
  BOOST_TEST(config.workers == 3);
  BOOST_TEST(config.psPort == 8000);         // default
}

BOOST_AUTO_TEST_CASE(config_file_can_come_from_the_environment) {
  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("c.yaml"), "ps: 4\npsHosts: [a:1, b:2, c:3, d:4]\n");
  auto config = load({{}, {{"PSTRAIN_CONFIG", dir.file("c.yaml")}}});
  BOOST_TEST(config.ps == 4);
  BOOST_TEST(config.psHosts.size() == 4u);
}

BOOST_AUTO_TEST_CASE(ps_hosts_file_holds_the_ps_and_their_number) {
  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("ps-hosts"), "127.0.0.1:7001,127.0.0.1:7002\n");
  auto config = load({{"--ps-hosts-file", dir.file("ps-hosts"), "--ps", "3"}, {}});
  BOOST_TEST(config.ps == 2);  // the file's
  BOOST_TEST(config.psHosts.size() == 2u);
  BOOST_TEST(contains(errorOf({{"--ps-hosts-file", dir.file("none")}, {}}), "cannot be read"));
  pstrain::testing::writeFile(dir.file("bad"), "127.0.0.1\n");
  BOOST_TEST(contains(errorOf({{"--ps-hosts-file", dir.file("bad")}, {}}), dir.file("bad")));
  BOOST_TEST(contains(errorOf({{"--ps-hosts-file", dir.file("ps-hosts"), "--ps-hosts", "a:1"}, {}}),
                      "give one of them"));
}

BOOST_AUTO_TEST_CASE(statefulsets_to_scale_down_come_as_the_chart_writes_them) {
  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("c.yaml"), "scaleDownOnCompletion: mnist-ps,mnist-worker\n");
  auto config = load({{"--config", dir.file("c.yaml")}, {}});
  BOOST_TEST(config.scaleDownOnCompletion == (std::vector<std::string>{"mnist-ps", "mnist-worker"}),
             boost::test_tools::per_element());
  BOOST_TEST(load({{}, {}}).scaleDownOnCompletion.empty());
  BOOST_TEST(contains(errorOf({{"--scale-down-on-completion", "mnist-ps,a/b"}, {}}),
                      "scaleDownOnCompletion"));
}

BOOST_AUTO_TEST_CASE(flag_forms_and_lists_parse) {
  auto config = load({{"--sync", "--hidden-units=256,256", "--optimizer", "sgd", "--role",
                       "worker", "--index", "2", "--workers", "3"},
                      {}});
  BOOST_TEST(pstrain::config::synchronous(config));
  BOOST_TEST(config.hiddenUnits == (std::vector<int>{256, 256}));
  BOOST_TEST((config.optimizer == pstrain::ps::OptimizerKind::kSgd));
  BOOST_TEST((config.role == pstrain::Role::kWorker));
  BOOST_TEST(*config.index == 2);
}

BOOST_AUTO_TEST_CASE(repeated_flag_takes_the_last_value) {
  BOOST_TEST(load({{"--batch-size", "5", "--batch-size", "6"}, {}}).batchSize == 6);
}

BOOST_AUTO_TEST_CASE(pod_name_falls_back_to_POD_NAME) {
  BOOST_TEST(load({{}, {{"POD_NAME", "mnist-ps-1"}}}).podName == "mnist-ps-1");
  BOOST_TEST(load({{"--pod-name", "x-worker-0"}, {{"POD_NAME", "mnist-ps-1"}}}).podName ==
             "x-worker-0");
}

BOOST_AUTO_TEST_CASE(invalid_values_name_key_value_and_what_is_allowed) {
  auto message = errorOf({{"--batch-size", "0"}, {}});
  BOOST_TEST(contains(message, "batchSize"));
  BOOST_TEST(contains(message, "'0'"));
  BOOST_TEST(contains(message, "--batch-size"));
  BOOST_TEST(contains(message, "integer from 1"));

  message = errorOf({{}, {{"PSTRAIN_OPTIMIZER", "rmsprop"}}});
  BOOST_TEST(contains(message, "optimizer"));
  BOOST_TEST(contains(message, "adam or sgd"));
  BOOST_TEST(contains(message, "PSTRAIN_OPTIMIZER"));

  BOOST_TEST(contains(errorOf({{"--learning-rate", "-1"}, {}}), "learningRate"));
  BOOST_TEST(contains(errorOf({{"--learning-rate", "fast"}, {}}), "learningRate"));
  BOOST_TEST(contains(errorOf({{"--ps-port", "70000"}, {}}), "psPort"));
  BOOST_TEST(contains(errorOf({{"--hidden-units", "128,x"}, {}}), "hiddenUnits"));
  BOOST_TEST(contains(errorOf({{"--sync=maybe"}, {}}), "true, false or auto"));
  BOOST_TEST(contains(errorOf({{"--ps-hosts", "nohostport"}, {}}), "psHosts"));
  BOOST_TEST(contains(errorOf({{"--role", "chief"}, {}}), "ps or worker"));
}

BOOST_AUTO_TEST_CASE(unknown_flags_env_and_keys_are_refused) {
  BOOST_TEST(contains(errorOf({{"--batchsize", "5"}, {}}), "unknown flag --batchsize"));
  BOOST_TEST(contains(errorOf({{"stray"}, {}}), "unexpected argument 'stray'"));
  BOOST_TEST(contains(errorOf({{"--batch-size"}, {}}), "needs a value"));
  BOOST_TEST(contains(errorOf({{}, {{"PSTRAIN_BATCHSIZE", "5"}}}), "PSTRAIN_BATCHSIZE"));

  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("c.yaml"), "batchsize: 20\n");
  BOOST_TEST(contains(errorOf({{"--config", dir.file("c.yaml")}, {}}), "unknown key batchsize"));
}

BOOST_AUTO_TEST_CASE(broken_or_missing_config_file_is_refused) {
  pstrain::testing::TempDir dir;
  pstrain::testing::writeFile(dir.file("bad.yaml"), "batchSize: [1, 2\n");
  BOOST_TEST(contains(errorOf({{"--config", dir.file("bad.yaml")}, {}}), "not valid YAML"));
  BOOST_TEST(contains(errorOf({{"--config", dir.file("none.yaml")}, {}}), "cannot be read"));
  pstrain::testing::writeFile(dir.file("list.yaml"), "- a\n- b\n");
  BOOST_TEST(contains(errorOf({{"--config", dir.file("list.yaml")}, {}}), "mapping"));
}

BOOST_AUTO_TEST_CASE(ps_hosts_must_match_the_ps_count) {
  BOOST_TEST(contains(errorOf({{"--ps", "3", "--ps-hosts", "a:1,b:2"}, {}}), "must agree"));
}

BOOST_AUTO_TEST_CASE(names_derive_from_keys) {
  BOOST_TEST(pstrain::config::flagName("peerTimeoutSeconds") == "--peer-timeout-seconds");
  BOOST_TEST(pstrain::config::envName("peerTimeoutSeconds") == "PSTRAIN_PEER_TIMEOUT_SECONDS");
}

BOOST_AUTO_TEST_CASE(run_fingerprint_changes_with_training_settings_only) {
  auto base = load({});
  auto same = load({{"--log-dir", "/elsewhere"}, {}});
  auto moreWorkers = load({{"--workers", "4"}, {}});  // workers join and leave a run
  BOOST_TEST(pstrain::config::runFingerprint(base) == pstrain::config::runFingerprint(moreWorkers));
  auto other = load({{"--learning-rate", "0.01"}, {}});
  BOOST_TEST(pstrain::config::runFingerprint(base) == pstrain::config::runFingerprint(same));
  BOOST_TEST(pstrain::config::runFingerprint(base) != pstrain::config::runFingerprint(other));
}

BOOST_AUTO_TEST_CASE(run_id_makes_another_run_of_the_same_settings) {
  using pstrain::config::runFingerprint;
  auto none = load({{"--sync", "false"}, {}});  // the default mode of earlier versions
  auto first = load({{"--run-id", "k3x9q2"}, {}});
  auto again = load({{}, {{"PSTRAIN_RUN_ID", "k3x9q2"}}});
  auto second = load({{"--run-id", "v7m1p8"}, {}});
  BOOST_TEST(first.runId == "k3x9q2");
  BOOST_TEST(runFingerprint(first) == runFingerprint(again));   // a restart resumes
  BOOST_TEST(runFingerprint(first) != runFingerprint(second));  // a new install does not
  BOOST_TEST(runFingerprint(first) != runFingerprint(none));
  // No run id: the fingerprint of the settings alone, as before the key existed (less the
  // worker and ps counts, which left the fingerprint).
  BOOST_TEST(runFingerprint(none) == 1588296016564934707ull);
}

// The fingerprint is derived from the keys that shape the run; its value is the one earlier
// versions computed for the same settings, so their checkpoints and completion records resume,
// but for the worker count, which left the fingerprint when workers became free to join and
// leave a run (7188401744538831407 with "workers=3" in it), and the ps count, which left it when
// worker 0 came to re-cut the ps during a run (7736809164331075331 with "ps=2"). A sync run with
// its learning rate scaled (the default since scaling came) trains otherwise than those
// versions' sync runs, and is another run.
BOOST_AUTO_TEST_CASE(run_fingerprint_is_that_of_earlier_versions) {
  std::vector<std::string> args{"--ps", "2", "--workers", "3", "--train-steps", "3000",
                                "--batch-size", "50", "--learning-rate", "0.01", "--optimizer",
                                "sgd", "--sync", "--seed", "7", "--hidden-units", "256,64",
                                "--run-id", "abc", "--log-every-steps", "10", "--http-port", "1234"};
  auto scaled = load({args, {}});
  args.insert(args.end(), {"--scale-learning-rate", "false"});
  auto unscaled = load({args, {}});
  BOOST_TEST(pstrain::config::runFingerprint(unscaled) == 12241803704580415486ull);
  BOOST_TEST(pstrain::config::runFingerprint(scaled) != 12241803704580415486ull);
  args.insert(args.end(), {"--ps", "3"});
  BOOST_TEST(pstrain::config::runFingerprint(load({args, {}})) == 12241803704580415486ull);
  args.insert(args.end(), {"--scale-learning-rate", "true", "--warmup-steps", "50"});
  BOOST_TEST(pstrain::config::runFingerprint(load({args, {}})) !=
             pstrain::config::runFingerprint(scaled));
}

BOOST_AUTO_TEST_CASE(only_bool_flags_stand_alone) {
  auto settings = load({{"--log-to-stdout", "--sync"}, {}});
  BOOST_TEST(settings.logToStdout);
  BOOST_TEST(pstrain::config::synchronous(settings));
  BOOST_TEST(contains(errorOf({{"--seed", "--sync"}, {}}), "flag --seed needs a value"));
}

// Recording the history is off unless asked for, and changes nothing of the run.
BOOST_AUTO_TEST_CASE(record_history_is_a_switch_outside_the_run) {
  auto base = load({});
  BOOST_TEST(!base.recordHistory);
  auto recorded = load({{"--record-history"}, {}});
  BOOST_TEST(recorded.recordHistory);
  BOOST_TEST(!load({{"--record-history=false"}, {}}).recordHistory);
  BOOST_TEST(load({{}, {{"PSTRAIN_RECORD_HISTORY", "true"}}}).recordHistory);
  BOOST_TEST(pstrain::config::runFingerprint(base) == pstrain::config::runFingerprint(recorded));
  BOOST_TEST(contains(errorOf({{"--record-history", "maybe"}, {}}), "recordHistory"));
}

BOOST_AUTO_TEST_CASE(run_id_is_short_and_plain) {
  BOOST_TEST(load({{"--run-id", std::string(64, 'a')}, {}}).runId.size() == 64u);
  auto message = errorOf({{"--run-id", std::string(65, 'a')}, {}});
  BOOST_TEST(contains(message, "runId"));
  BOOST_TEST(contains(message, "up to 64 letters, digits"));
  BOOST_TEST(contains(errorOf({{"--run-id", "a/b"}, {}}), "runId"));
  BOOST_TEST(contains(errorOf({{"--run-id", "a b"}, {}}), "runId"));
}
