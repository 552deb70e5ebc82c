#define BOOST_TEST_MODULE hostile
#include <boost/test/unit_test.hpp>

#include <Poco/Exception.h>
#include <Poco/Net/StreamSocket.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <atomic>
#include <random>
#include <thread>

#include "pstrain/app/child_process.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/config/config.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/net/auth.hpp"
#include "pstrain/net/connection.hpp"
#include "pstrain/net/free_ports.hpp"
#include "support/events.hpp"
#include "support/idx_files.hpp"
#include "support/process_run.hpp"
#include "support/wait.hpp"

// Bad bytes thrown at a live ps while two workers train with it: each bad connection is refused
// and recorded (a rejected event), and the training completes.

using namespace pstrain::testing;
using namespace pstrain::net;

namespace {

constexpr int kSteps = 20000;

struct LiveCluster {
  TempDir data;
  TempDir logs;
  std::vector<int> ports = freeLoopbackPorts(6);  // ps, worker 0, worker 1, three HTTP
  const int steps;
  std::vector<std::string> settings{"--ps", "1", "--workers", "2", "--train-steps",
                                    std::to_string(steps), "--batch-size", "20",
                                    "--hidden-units", "16", "--log-every-steps", "100"};
  std::vector<std::unique_ptr<pstrain::app::ChildProcess>> processes;

  explicit LiveCluster(int trainSteps = kSteps) : steps(trainSteps) {
    writeSyntheticMnist(data.path(), 2000, 200, false);
    writeFile(logs.file("key"), "the-right-key\n");
    start("ps", 0, ports[0], ports[3]);
    start("worker", 0, ports[1], ports[4]);
    start("worker", 1, ports[2], ports[5]);
  }

  void start(const std::string& role, int index, int port, int httpPort) {
    std::string dir = logs.file(role + "-" + std::to_string(index));
    std::filesystem::create_directories(dir);
    std::vector<std::string> argv{pstrainBinary(), "run"};
    argv.insert(argv.end(), settings.begin(), settings.end());
    std::vector<std::string> placement{
        "--role", role, "--index", std::to_string(index), "--ps-hosts",
        "127.0.0.1:" + std::to_string(ports[0]), role == "ps" ? "--ps-port" : "--worker-port",
        std::to_string(port), "--http-port", std::to_string(httpPort), "--data-dir", data.path(),
        "--log-dir", dir, "--auth-key-file", logs.file("key"), "--log-to-stdout", "false"};
    argv.insert(argv.end(), placement.begin(), placement.end());
    processes.push_back(
        std::make_unique<pstrain::app::ChildProcess>(argv, "/dev/null", dir + "/stderr.log"));
  }

  // Whether the ps has refused a connection with a reason that contains `text`.
  bool psRejected(const std::string& text) const {
    const auto rejected = eventsOf(logs.file("ps-0"), "rejected");
    return std::any_of(rejected.begin(), rejected.end(), [&](const auto& e) {
      return e->template getValue<std::string>("reason").find(text) != std::string::npos;
    });
  }
  std::uint64_t psStep() const {
    auto last = lastEventOf(logs.file("ps-0"), "step");  // a ps's steps only grow
    return last ? last->getValue<std::uint64_t>("step") : 0;
  }

  Poco::Net::StreamSocket connect() const {
    return Poco::Net::StreamSocket(Poco::Net::SocketAddress("127.0.0.1", std::uint16_t(ports[0])));
  }

  // What a real worker 1 says in its hello: same model, same run.
  Hello hello() const {
    auto config = pstrain::config::load({settings, {}});
    return Hello{pstrain::Role::kWorker,
                 1,
                 pstrain::model::Layout::mnist(config.hiddenUnits).parameterCount(),
                 pstrain::config::runFingerprint(config),
                 0,
                 randomNonce(),
                 config.pushEncoding,
                 config.pullEncoding};
  }
};

// Whether the ps closed the connection (after an error frame, or at once) within 10 s.
bool closedByPs(Poco::Net::StreamSocket& socket) {
  socket.setReceiveTimeout(Poco::Timespan(10, 0));
  char buffer[4096];
  try {
    while (socket.receiveBytes(buffer, sizeof buffer) > 0) {
    }
    return true;  // closed
  } catch (const Poco::TimeoutException&) {
    return false;  // still open
  } catch (const Poco::Exception&) {
    return true;  // reset
  }
}

// A worker's side of the handshake, proving `key`.
void introduce(Connection& connection, const Hello& hello, const std::string& key) {
  connection.send(MessageType::kHello, encode(hello));
  auto challenge = decodeChallenge(connection.receiveExpected(MessageType::kChallenge));
  connection.send(MessageType::kProof,
                  encode(Proof{prove(key, "worker", challenge.nonce, hello.nonce)}));
}

bool rejected(const LiveCluster& cluster, const std::string& reason) {
  return waitFor([&] { return cluster.psRejected(reason); }, std::chrono::seconds(10));
}

}  // namespace

BOOST_AUTO_TEST_CASE(bad_connections_are_refused_and_training_completes) {
  LiveCluster cluster;
  BOOST_REQUIRE(waitFor([&] { return cluster.psStep() >= 100; }, std::chrono::seconds(30)));

  {  // random bytes
    auto socket = cluster.connect();
    std::mt19937 generator(7);
    std::vector<char> noise(4096);
    for (auto& byte : noise) byte = char(generator());
    socket.sendBytes(noise.data(), int(noise.size()));
    BOOST_TEST(closedByPs(socket));
    BOOST_TEST(rejected(cluster, "bad magic"));
  }
  {  // a valid header announcing a huge push (and bytes enough to be read)
    auto socket = cluster.connect();
    auto header = encodeHeader(MessageType::kPush, 0xfffffff0u);
    socket.sendBytes(header.data(), int(header.size()));
    std::vector<char> some(64, 1);
    socket.sendBytes(some.data(), int(some.size()));
    BOOST_TEST(closedByPs(socket));
    BOOST_TEST(rejected(cluster, "push frame of 4294967280 bytes has an invalid length"));
  }
  {  // a truncated frame: half a hello, then the peer leaves
    auto socket = cluster.connect();
    auto hello = encode(cluster.hello());
    auto header = encodeHeader(MessageType::kHello, std::uint32_t(hello.size()));
    socket.sendBytes(header.data(), int(header.size()));
    socket.sendBytes(hello.data(), 10);
    socket.shutdownSend();
    BOOST_TEST(closedByPs(socket));
  }
  {  // half a hello, then silence: closed at the handshake deadline
    auto socket = cluster.connect();
    auto hello = encode(cluster.hello());
    auto header = encodeHeader(MessageType::kHello, std::uint32_t(hello.size()));
    socket.sendBytes(header.data(), int(header.size()));
    BOOST_TEST(closedByPs(socket));
    BOOST_TEST(rejected(cluster, "no complete first frame within 5 s"));
  }
  {  // a push before any hello
    auto socket = cluster.connect();
    Connection connection(socket, 1 << 20);
    std::vector<float> gradient(10, 1.0f);
    connection.send(MessageType::kPush, encode(Push{1, 0.5f, 0, 0, 1, 1}), gradient.data(),
                    gradient.size());
    BOOST_TEST(closedByPs(socket));
    BOOST_TEST(rejected(cluster, "expected hello but received push"));
  }
  {  // a connection without the key
    auto socket = cluster.connect();
    Connection connection(socket, 1 << 20);
    introduce(connection, cluster.hello(), "a-wrong-key");
    BOOST_TEST(closedByPs(socket));
    BOOST_TEST(rejected(cluster, "failed authentication"));
  }
  // The right key, then pushes the ps does not take: in another encoding than the run's (log4),
  // of the wrong size, and as factors, which go in fp32 alone.
  const std::vector<std::pair<Push, std::string>> pushes{
      {Push{1, 0.5f, 0, 0, 1, 1, WireEncoding::kFp32},
       "a push encoded fp32 where this ps takes log4 (pushEncoding)"},
      {Push{1, 0.5f, 0, 0, 1, 1, WireEncoding::kLog4}, "carries 10 words, not "},
      {Push{1, 0.5f, 1, 0, 1, 1, WireEncoding::kLog4},
       "a push of gradient factors (batch 1) encoded log4"}};
  for (const auto& [push, reason] : pushes) {
    auto socket = cluster.connect();
    Connection connection(socket, 1 << 24);
    introduce(connection, cluster.hello(), "the-right-key");
    decodeWelcome(connection.receiveExpected(MessageType::kWelcome));
    std::vector<float> gradient(10, 1.0f);
    connection.send(MessageType::kPush, encode(push), gradient.data(), gradient.size());
    BOOST_TEST(closedByPs(socket));
    BOOST_TEST(rejected(cluster, reason), reason);
  }

  // The training beside all this reaches its last step.
  BOOST_TEST(waitFor([&] { return std::filesystem::exists(cluster.logs.file("worker-0/result.json")); },
                     std::chrono::seconds(120)));
  BOOST_TEST(cluster.psStep() == std::uint64_t(kSteps));
  BOOST_TEST(!cluster.processes[0]->poll().has_value());  // the ps still serves
}

// Strangers that hold connections open (a port scan, a stuck client, a byte a second) cost the
// ps no thread: training goes on, and a worker that restarts meanwhile is admitted at once.
BOOST_AUTO_TEST_CASE(silent_and_trickling_connections_do_not_hold_training) {
  // A run far longer than the test: it asserts progress, not completion (the test above does),
  // so no machine is fast enough to finish the run before the strangers' deadline.
  LiveCluster cluster(100000000);
  BOOST_REQUIRE(waitFor([&] { return cluster.psStep() >= 100; }, std::chrono::seconds(30)));
  std::vector<Poco::Net::StreamSocket> silent;
  for (int i = 0; i < 300; ++i) silent.push_back(cluster.connect());
  std::vector<Poco::Net::StreamSocket> trickling;
  for (int i = 0; i < 30; ++i) trickling.push_back(cluster.connect());
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const char byte = 'P';
    while (!stop) {
      for (auto& socket : trickling) {
        try {
          socket.sendBytes(&byte, 1);
        } catch (const Poco::Exception&) {
        }
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });

  // Training goes on while the strangers hold their connections (their deadline is 5 s away).
  const auto held = cluster.psStep();
  BOOST_TEST(waitFor([&] { return cluster.psStep() >= held + 1000; }, std::chrono::seconds(3)));
  BOOST_TEST(!cluster.psRejected("no complete first frame"));

  // Worker 1 restarts while the strangers hold their connections, and is admitted at once.
  cluster.processes[2]->stop(std::chrono::milliseconds(0));
  const auto restarted = std::chrono::steady_clock::now();
  std::filesystem::remove(cluster.logs.file("worker-1/events.jsonl"));
  cluster.start("worker", 1, cluster.ports[2], cluster.ports[5]);
  BOOST_TEST(waitFor([&] { return !eventsOf(cluster.logs.file("worker-1"), "connected").empty(); },
                     std::chrono::seconds(10)));
  BOOST_TEST((std::chrono::steady_clock::now() - restarted < std::chrono::seconds(5)));

  // The strangers are closed at their deadline, and training goes on.
  BOOST_TEST(rejected(cluster, "no complete first frame within 5 s"));
  const auto closed = cluster.psStep();
  BOOST_TEST(waitFor([&] { return cluster.psStep() >= closed + 1000; }, std::chrono::seconds(10)));
  stop = true;
  trickle.join();
}
