#define BOOST_TEST_MODULE connection
#include <boost/test/unit_test.hpp>

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>

#include <sys/socket.h>

#include <numeric>
#include <thread>

#include "pstrain/common/error.hpp"
#include "pstrain/net/connection.hpp"

using namespace pstrain::net;

namespace {

// Two ends of a real loopback TCP connection.
struct SocketPair {
  SocketPair() {
    Poco::Net::ServerSocket server(Poco::Net::SocketAddress("127.0.0.1", 0));
    client.connect(server.address());
    accepted = server.acceptConnection();
  }
  Poco::Net::StreamSocket client;
  Poco::Net::StreamSocket accepted;
};

}  // namespace

BOOST_AUTO_TEST_CASE(frames_with_values_arrive_intact) {
  SocketPair pair;
  Connection sender(pair.client, 1 << 24);
  Connection receiver(pair.accepted, 1 << 24);
  std::vector<float> values(300000);  // larger than a socket buffer: partial sends happen
  std::iota(values.begin(), values.end(), 0.5f);
  std::thread writer([&] {
    sender.send(MessageType::kPush, encode(Push{5, 1.5f, 0, 0, 1, 1}), values.data(), values.size());
  });
  const auto& frame = receiver.receive();
  BOOST_TEST((frame.type == MessageType::kPush));
  BOOST_TEST(frame.valueCount == values.size());
  BOOST_TEST(decodePush(frame.fields).localStep == 5u);
  std::vector<float> received(values.size());
  receiver.receiveValues(received.data(), received.size());
  writer.join();
  BOOST_TEST(received == values);
}

BOOST_AUTO_TEST_CASE(receive_buffer_holds_a_whole_frame_and_reads_see_bytes_as_they_come) {
  SocketPair pair;
  const std::uint32_t frame = 400000;  // a 784-128-10 model's parameters
  Connection receiver(pair.accepted, frame);
  int buffer = 0;
  int lowWater = 0;
  socklen_t size = sizeof buffer;
  getsockopt(pair.accepted.impl()->sockfd(), SOL_SOCKET, SO_RCVBUF, &buffer, &size);
  getsockopt(pair.accepted.impl()->sockfd(), SOL_SOCKET, SO_RCVLOWAT, &lowWater, &size);
  BOOST_TEST(buffer >= int(2 * frame));
  BOOST_TEST(lowWater == 1);
}

BOOST_AUTO_TEST_CASE(wrong_value_count_is_a_protocol_error) {
  SocketPair pair;
  Connection sender(pair.client, 1 << 20);
  Connection receiver(pair.accepted, 1 << 20);
  std::vector<float> values(10, 1.0f);
  sender.send(MessageType::kPush, encode(Push{1, 0, 0, 0, 1, 1}), values.data(), values.size());
  receiver.receive();
  std::vector<float> shard(12);
  BOOST_CHECK_THROW(receiver.receiveValues(shard.data(), shard.size()), pstrain::ProtocolError);
}

BOOST_AUTO_TEST_CASE(oversized_frame_is_refused_before_reading_it) {
  SocketPair pair;
  Connection sender(pair.client, 1 << 20);
  Connection receiver(pair.accepted, 64);
  std::vector<float> values(1000, 1.0f);
  std::thread writer([&] {
    try {
      sender.send(MessageType::kPush, encode(Push{1, 0, 0, 0, 1, 1}), values.data(), values.size());
    } catch (const std::exception&) {
    }
  });
  BOOST_CHECK_THROW(receiver.receive(), pstrain::ProtocolError);
  pair.accepted.close();
  writer.join();
}

BOOST_AUTO_TEST_CASE(garbage_bytes_are_a_protocol_error) {
  SocketPair pair;
  Connection receiver(pair.accepted, 1 << 20);
  pair.client.sendBytes("GET / HTTP/1.1\r\n\r\n", 18);
  BOOST_CHECK_THROW(receiver.receive(), pstrain::ProtocolError);
}

BOOST_AUTO_TEST_CASE(error_frame_carries_the_peers_reason) {
  SocketPair pair;
  Connection sender(pair.client, 1 << 20);
  Connection receiver(pair.accepted, 1 << 20);
  sender.sendError("run mismatch");
  try {
    receiver.receive();
    BOOST_FAIL("expected a PeerError");
  } catch (const pstrain::PeerError& e) {
    BOOST_TEST(std::string(e.what()).find("run mismatch") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(closed_or_truncated_connection_is_a_peer_error) {
  SocketPair pair;
  Connection receiver(pair.accepted, 1 << 20);
  auto header = encodeHeader(MessageType::kDone, 8);
  pair.client.sendBytes(header.data(), int(header.size()));
  pair.client.sendBytes("abc", 3);  // 3 of the 8 announced bytes, then the peer leaves
  pair.client.close();
  BOOST_CHECK_THROW(receiver.receive(), pstrain::PeerError);
}

BOOST_AUTO_TEST_CASE(unexpected_type_is_a_protocol_error) {
  SocketPair pair;
  Connection sender(pair.client, 1 << 20);
  Connection receiver(pair.accepted, 1 << 20);
  sender.send(MessageType::kPull);
  BOOST_CHECK_THROW(receiver.receiveExpected(MessageType::kWelcome), pstrain::ProtocolError);
}
