#define BOOST_TEST_MODULE free_ports
#include <boost/test/unit_test.hpp>

#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>

#include <set>

#include "pstrain/net/free_ports.hpp"
#include "pstrain/net/listener.hpp"

using namespace pstrain::net;

BOOST_AUTO_TEST_CASE(the_ports_are_distinct) {
  auto ports = freeLoopbackPorts(20);
  BOOST_TEST(std::set<int>(ports.begin(), ports.end()).size() == 20u);
}

BOOST_AUTO_TEST_CASE(a_port_is_kept_from_other_binds_and_free_for_the_daemons_listener) {
  const int port = freeLoopbackPorts(1)[0];
  // A bind without SO_REUSEADDR finds the port taken, as the kernel's choice of a port for a
  // bind to port 0 or an outgoing connection does.
  Poco::Net::ServerSocket other;
  BOOST_CHECK_THROW(other.bind(Poco::Net::SocketAddress("127.0.0.1", Poco::UInt16(port)), false),
                    Poco::Net::NetException);
  // The listener it was chosen for binds it (on every address, as the daemon's do).
  Listener listener(Listener::Options{port}, [](Channel&) {});
  BOOST_TEST(listener.port() == port);
}
