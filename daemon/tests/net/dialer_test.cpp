#define BOOST_TEST_MODULE dialer
#include <boost/test/unit_test.hpp>

#include <Poco/Net/ServerSocket.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/common/error.hpp"
#include "pstrain/net/dialer.hpp"
#include "pstrain/net/retry.hpp"

using namespace pstrain::net;
using Clock = std::chrono::steady_clock;

namespace {

const Waiting kUntold = [](int, const std::string&) {};

Poco::Net::StreamSocket connectWithRetry(const Endpoint& endpoint, Clock::time_point deadline) {
  Poco::Net::StreamSocket socket;
  retryUntil(endpoint, deadline, [&] { socket = connectOnce(endpoint); }, kUntold);
  return socket;
}

std::string peerErrorOf(const Endpoint& endpoint, std::chrono::milliseconds timeout) {
  try {
    connectWithRetry(endpoint, Clock::now() + timeout);
  } catch (const pstrain::PeerError& e) {
    return e.what();
  }
  BOOST_FAIL("expected a PeerError");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(connects_to_a_listening_peer) {
  Poco::Net::ServerSocket server(Poco::Net::SocketAddress("127.0.0.1", 0));
  auto socket = connectWithRetry({"localhost", server.address().port()},
                                 Clock::now() + std::chrono::seconds(5));
  BOOST_TEST(socket.peerAddress().port() == server.address().port());
}

BOOST_AUTO_TEST_CASE(unresolvable_name_fails_after_the_deadline_naming_dns) {
  auto start = Clock::now();
  auto message = peerErrorOf({"no-such-peer.invalid", 8000}, std::chrono::milliseconds(800));
  BOOST_TEST(message.find("no-such-peer.invalid:8000") != std::string::npos);
  BOOST_TEST(message.find("DNS name did not resolve") != std::string::npos);
  BOOST_TEST((Clock::now() - start < std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_CASE(closed_port_fails_after_the_deadline_naming_the_connection) {
  int port;
  {
    Poco::Net::ServerSocket probe(Poco::Net::SocketAddress("127.0.0.1", 0));
    port = probe.address().port();
  }
  auto message = peerErrorOf({"127.0.0.1", port}, std::chrono::milliseconds(500));
  BOOST_TEST(message.find("no connection") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(waits_for_a_peer_that_starts_listening_late) {
  int port;
  {
    Poco::Net::ServerSocket probe(Poco::Net::SocketAddress("127.0.0.1", 0));
    port = probe.address().port();
  }
  std::thread lateServer([port] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the peer's late start
    Poco::Net::ServerSocket server(
        Poco::Net::SocketAddress("127.0.0.1", static_cast<Poco::UInt16>(port)), true);
    server.acceptConnection();
  });
  auto socket = connectWithRetry({"127.0.0.1", port}, Clock::now() + std::chrono::seconds(10));
  BOOST_TEST(socket.peerAddress().port() == port);
  lateServer.join();
}

BOOST_AUTO_TEST_CASE(a_refusal_or_a_protocol_error_is_not_retried) {
  int attempts = 0;
  BOOST_CHECK_THROW(retryUntil({"ps", 1}, Clock::now() + std::chrono::seconds(10),
                               [&] {
                                 ++attempts;
                                 throw pstrain::RefusedError("ps refused: another run");
                               }, kUntold),
                    pstrain::RefusedError);
  BOOST_CHECK_THROW(retryUntil({"ps", 1}, Clock::now() + std::chrono::seconds(10),
                               [&] {
                                 ++attempts;
                                 throw pstrain::ProtocolError("bad magic");
                               }, kUntold),
                    pstrain::ProtocolError);
  BOOST_TEST(attempts == 2);
}

BOOST_AUTO_TEST_CASE(an_unreachable_peer_is_tried_again_until_an_attempt_succeeds) {
  int attempts = 0;
  std::vector<std::string> told;
  retryUntil({"ps", 1}, Clock::now() + std::chrono::seconds(10), [&] {
    if (++attempts < 3) throw pstrain::UnreachableError("closed by the peer");
  }, [&](int attempt, const std::string& failure) {
    told.push_back(std::to_string(attempt) + ": " + failure);
  });
  BOOST_TEST(attempts == 3);
  // The first failure is told, the second not (then every tenth): a wait is seen, not flooded.
  BOOST_TEST(told == std::vector<std::string>{"1: closed by the peer"});
}
