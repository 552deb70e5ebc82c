#define BOOST_TEST_MODULE network_fault
#include <boost/test/unit_test.hpp>

#include <Poco/Exception.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/fault_proxy.hpp"
#include "support/in_process_cluster.hpp"
#include "support/wait.hpp"

// What networks do between workers and ps, toxiproxy's toxics as the model: the test support's
// FaultProxy first on its own, then in front of each ps of an in-process cluster (2 ps and 2
// workers as threads, over TCP on 127.0.0.1), where each toxic hits a run that must still end at
// exactly trainSteps.

using namespace pstrain;
using namespace pstrain::testing;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A connection through a fault proxy: the client's end, and the end the proxy's target accepted.
struct Through {
  explicit Through(std::uint64_t seed = 1)
      : target(Poco::Net::SocketAddress("127.0.0.1", 0)),
        proxy(net::Endpoint{"127.0.0.1", target.address().port()}, seed) {
    client.connect(Poco::Net::SocketAddress("127.0.0.1", std::uint16_t(proxy.endpoint().port)));
    client.setNoDelay(true);
    accepted = target.acceptConnection();
    accepted.setNoDelay(true);
  }

  Poco::Net::ServerSocket target;
  FaultProxy proxy;
  Poco::Net::StreamSocket client;
  Poco::Net::StreamSocket accepted;
};

// Reads from `socket` until `count` bytes have come.
void receiveAll(Poco::Net::StreamSocket& socket, size_t count) {
  std::vector<char> buffer(count);
  for (size_t got = 0; got < count;) {
    const int n = socket.receiveBytes(buffer.data() + got, int(count - got));
    if (n <= 0) throw std::runtime_error("the connection ended after " + std::to_string(got));
    got += size_t(n);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fault_proxy)

BOOST_AUTO_TEST_CASE(delays_each_direction_by_its_latency_give_or_take_its_jitter) {
  Through through;
  through.proxy.setLatency(milliseconds(40), milliseconds(10));
  for (int i = 0; i < 3; ++i) {
    auto sent = Clock::now();
    through.client.sendBytes("x", 1);
    receiveAll(through.accepted, 1);
    const double there = secondsSince(sent);
    sent = Clock::now();
    through.accepted.sendBytes("y", 1);
    receiveAll(through.client, 1);
    const double back = secondsSince(sent);
    for (double delay : {there, back}) {
      BOOST_TEST(delay >= 0.030);
      BOOST_TEST(delay <= 0.050 + 0.5);  // late only by the scheduler's delay
    }
  }
}

BOOST_AUTO_TEST_CASE(draws_the_same_jitter_from_the_same_seed) {
  auto draws = [](std::uint64_t seed, std::uint64_t connection, std::uint64_t direction) {
    FaultProxy::Jitter jitter(seed, connection, direction);
    std::vector<long> delays;
    for (int i = 0; i < 16; ++i) delays.push_back(jitter.next(milliseconds(50)).count());
    return delays;
  };
  BOOST_TEST(draws(7, 3, 0) == draws(7, 3, 0));
  BOOST_TEST(draws(7, 3, 0) != draws(8, 3, 0));
  BOOST_TEST(draws(7, 3, 0) != draws(7, 4, 0));  // each connection
  BOOST_TEST(draws(7, 3, 0) != draws(7, 3, 1));  // and each direction its own
  for (long delay : draws(7, 3, 0)) BOOST_TEST(std::abs(delay) <= 50000);
}

BOOST_AUTO_TEST_CASE(a_bandwidth_cap_paces_the_bytes) {
  Through through;
  through.proxy.setBandwidth(200e3);
  const std::vector<char> bytes(100000, 'x');
  const auto start = Clock::now();
  std::thread sender([&] { through.client.sendBytes(bytes.data(), int(bytes.size())); });
  receiveAll(through.accepted, bytes.size());
  sender.join();
  BOOST_TEST(secondsSince(start) >= 0.45);
}

BOOST_AUTO_TEST_CASE(a_slice_of_one_byte_delivers_a_byte_at_a_time) {
  Through through;
  through.proxy.setSlice(1, milliseconds(2));
  const auto start = Clock::now();
  through.client.sendBytes(std::string(50, 'x').data(), 50);
  receiveAll(through.accepted, 50);
  BOOST_TEST(secondsSince(start) >= 49 * 0.002);  // a piece each gap
}

BOOST_AUTO_TEST_CASE(a_reset_after_n_bytes_cuts_the_stream_there_with_rst) {
  Through through;
  BOOST_REQUIRE(waitFor([&] { return through.proxy.accepted() == 1; }, std::chrono::seconds(5)));
  through.proxy.resetAfter(1000);
  through.client.sendBytes(std::string(5000, 'x').data(), 5000);
  std::vector<char> buffer(5000);
  size_t got = 0;
  BOOST_CHECK_THROW(
      for (;;) {
        const int n = through.accepted.receiveBytes(buffer.data() + got, int(buffer.size() - got));
        if (n <= 0) break;  // FIN would be a clean end: not what a reset is
        got += size_t(n);
      },
      Poco::Net::ConnectionResetException);
  BOOST_TEST(got == 1000u);
  BOOST_CHECK_THROW(receiveAll(through.client, 1), Poco::Net::ConnectionResetException);
  BOOST_TEST(through.proxy.resets() == 1u);
}

BOOST_AUTO_TEST_CASE(a_held_black_hole_delivers_everything_when_it_ends) {
  Through through;
  const auto start = Clock::now();
  through.proxy.blackHole(milliseconds(300));
  through.client.sendBytes("abc", 3);
  char bytes[3];
  BOOST_TEST(through.accepted.receiveBytes(bytes, 3) > 0);
  BOOST_TEST(secondsSince(start) >= 0.29);
}

BOOST_AUTO_TEST_CASE(a_dropping_black_hole_resets_its_connections_when_it_ends) {
  Through through;
  const auto start = Clock::now();
  through.proxy.blackHole(milliseconds(300), FaultProxy::BlackHole::kDrop);
  through.client.sendBytes("abc", 3);
  char bytes[3];
  BOOST_CHECK_THROW(through.accepted.receiveBytes(bytes, 3), Poco::Net::ConnectionResetException);
  BOOST_TEST(secondsSince(start) >= 0.29);
  BOOST_TEST(through.proxy.resets() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// 2 ps and 2 workers, asynchronous, each worker reaching each ps through its fault proxy.
struct ProxiedRun {
  explicit ProxiedRun(std::uint64_t trainSteps, std::vector<std::string> more = {})
      : steps(trainSteps), cluster(Transport::kTcpThroughProxy, flags(trainSteps, more)) {}

  static std::vector<std::string> flags(std::uint64_t trainSteps,
                                        const std::vector<std::string>& more) {
    std::vector<std::string> all{"--ps", "2", "--workers", "2", "--train-steps",
                                 std::to_string(trainSteps), "--batch-size", "20",
                                 "--hidden-units", "16", "--eval-every-steps", "0",
                                 "--peer-timeout-seconds", "10", "--sync", "false",
                                 "--record-history"};
    all.insert(all.end(), more.begin(), more.end());
    return all;
  }

  void start() {
    for (int i = 0; i < 2; ++i) cluster.startPs(i);
    for (int w = 0; w < 2; ++w) cluster.startWorker(w);
  }

  // The global step both ps have reached.
  std::uint64_t globalStep() {
    return std::min(cluster.server(0).globalStep(), cluster.server(1).globalStep());
  }

  void awaitStep(std::uint64_t step) {
    BOOST_REQUIRE(waitFor([&] { return globalStep() >= step; }, std::chrono::seconds(60)));
  }

  // Waits for the workers; checks that every ps and worker ended at exactly trainSteps, and the
  // run's history (testing::checkHistories).
  std::map<int, worker::TrainingResult> finish() {
    auto results = cluster.joinWorkers();  // throws if a worker gave up
    for (int i = 0; i < 2; ++i) BOOST_TEST(cluster.server(i).globalStep() == steps);
    for (const auto& [index, result] : results) BOOST_TEST(result.globalStep == steps);
    const auto violations = cluster.checkHistory();
    BOOST_TEST(violations.empty(), fmt::format("{}", fmt::join(violations, "\n")));
    return results;
  }

  std::uint64_t reconnects() {
    return cluster.workerReports(0).meters.reconnects + cluster.workerReports(1).meters.reconnects;
  }

  const std::uint64_t steps;
  InProcessCluster cluster;
};

}  // namespace

BOOST_AUTO_TEST_CASE(latency_with_jitter_costs_time_not_steps) {
  ProxiedRun run(300);
  for (int i = 0; i < 2; ++i) run.cluster.proxy(i).setLatency(milliseconds(2), milliseconds(1));
  run.start();
  run.finish();
  BOOST_TEST(run.reconnects() == 0u);
}

// Four pushes in flight over 5 ms each way: the run still ends at exactly trainSteps, and each
// push's staleness counts the answers it was computed before: in sync mode, where each answer is
// one global step, three.
BOOST_AUTO_TEST_CASE(pushes_in_flight_are_each_applied_once_with_their_true_staleness) {
  for (const std::string sync : {"true", "false"}) {
    BOOST_TEST_CONTEXT("sync " << sync) {
      ProxiedRun run(200, {"--pushes-in-flight", "4", "--sync", sync});
      for (int i = 0; i < 2; ++i) run.cluster.proxy(i).setLatency(milliseconds(5));
      run.start();
      const auto results = run.finish();
      BOOST_TEST(run.reconnects() == 0u);
      for (int i = 0; i < 2; ++i) {
        const auto staleness = run.cluster.psReports(i).meters.stalenessSummary();
        BOOST_TEST_MESSAGE("ps " << i << ": mean staleness " << staleness.mean << " of "
                                 << staleness.pushes << " pushes");
        if (sync == "true") {
          // Each worker's first three pushes went out with fewer answers in flight.
          BOOST_TEST(staleness.mean > 2.8);
          BOOST_TEST(staleness.mean <= 3.0);
        } else {
          BOOST_TEST(staleness.mean >= 3.0);  // and the other worker's pushes besides
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_bandwidth_cap_paces_the_run_and_loses_nothing) {
  constexpr double kCap = 2e6;  // bytes/s, each way of each connection
  ProxiedRun run(100);
  for (int i = 0; i < 2; ++i) run.cluster.proxy(i).setBandwidth(kCap);
  run.start();
  const auto results = run.finish();
  BOOST_TEST(run.reconnects() == 0u);
  // A worker's bytes went over 4 capped streams (to and from each ps).
  for (const auto& [index, result] : results) {
    BOOST_TEST(result.elapsedSeconds >= 0.9 * double(result.bytesExchanged) / (4 * kCap),
               "worker " << index << ": " << result.bytesExchanged << " bytes in "
                         << result.elapsedSeconds << " s");
  }
}

BOOST_AUTO_TEST_CASE(frames_delivered_a_byte_at_a_time_arrive_whole) {
  // A small model (a push of 6 KB to each ps), so that a byte at a time takes seconds, not
  // minutes; the handshakes come a byte at a time too.
  ProxiedRun run(40, {"--hidden-units", "4"});
  for (int i = 0; i < 2; ++i) run.cluster.proxy(i).setSlice(1);
  run.start();
  run.finish();
  BOOST_TEST(run.reconnects() == 0u);
}

BOOST_AUTO_TEST_CASE(a_reset_in_the_middle_of_a_frame_is_survived_by_reconnecting) {
  ProxiedRun run(600);
  run.start();
  run.awaitStep(100);
  // A push or an answer to ps 1 is 25 KB: each worker's connection breaks inside one.
  run.cluster.proxy(1).resetAfter(10000);
  BOOST_REQUIRE(waitFor([&] { return run.cluster.proxy(1).resets() == 2; },
                        std::chrono::seconds(30)));
  run.finish();
  BOOST_TEST(run.reconnects() >= 2u);
}

BOOST_AUTO_TEST_CASE(a_black_hole_of_a_second_is_ridden_out) {
  ProxiedRun run(600);
  run.start();
  run.awaitStep(100);
  run.cluster.proxy(0).blackHole(milliseconds(1000));
  const auto before = run.cluster.server(1).globalStep();
  std::this_thread::sleep_for(milliseconds(800));  // inside the hole: nothing to wait for
  // Every worker waits for ps 0's answer: ps 1 took at most two pushes from each, the one on its
  // way and one sent after an answer of ps 0 that had passed just before the hole opened.
  BOOST_TEST(run.cluster.server(1).globalStep() <= before + 4);
  run.finish();
  BOOST_TEST(run.reconnects() == 0u);
}

BOOST_AUTO_TEST_CASE(a_black_hole_that_drops_and_resets_is_survived_by_reconnecting) {
  ProxiedRun run(600);
  run.start();
  run.awaitStep(100);
  run.cluster.proxy(0).blackHole(milliseconds(500), FaultProxy::BlackHole::kDrop);
  BOOST_REQUIRE(waitFor([&] { return run.cluster.proxy(0).resets() >= 2; },
                        std::chrono::seconds(30)));
  run.finish();
  BOOST_TEST(run.reconnects() >= 2u);
}

// The workers give up on ps 0's answer after 1 s and connect again, into the same hole; their
// handshakes go through once it ends, after the pushes the hole held.
void reconnectThroughALongBlackHole(const char* sync) {
  ProxiedRun run(600, {"--idle-timeout-seconds", "1", "--sync", sync});
  run.start();
  run.awaitStep(100);
  run.cluster.proxy(0).blackHole(milliseconds(2500));
  run.finish();
  BOOST_TEST(run.reconnects() >= 2u);
}

BOOST_AUTO_TEST_CASE(a_black_hole_longer_than_the_idle_timeout_is_reconnected_through) {
  reconnectThroughALongBlackHole("false");
}

// In sync mode the pushes the hole held reach ps 0's barrier after their workers gave up on them;
// the steps go on from there, each counting every worker once.
BOOST_AUTO_TEST_CASE(a_sync_run_reconnects_through_a_black_hole_longer_than_the_idle_timeout) {
  reconnectThroughALongBlackHole("true");
}
