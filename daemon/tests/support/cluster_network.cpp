#include "support/cluster_network.hpp"

#include <csignal>
#include <map>

#include "pstrain/app/role_options.hpp"
#include "pstrain/net/free_ports.hpp"
#include "pstrain/net/listener.hpp"
#include "pstrain/net/loopback.hpp"

namespace pstrain::testing {
namespace {

class Loopback : public ClusterNetwork {
 public:
  net::Endpoint psEndpoint(int index) const override {
    return {"ps-" + std::to_string(index), 8000};
  }
  void listen(int index, const ps::Server&, observe::Metrics&, net::Serve serve) override {
    network_.listen(psEndpoint(index).toString(), std::move(serve));
  }
  void close(int index) override { network_.close(psEndpoint(index).toString()); }
  net::Dialer dialer(int, net::TrafficCounters*) override {
    return [this](const net::Endpoint& endpoint, std::uint32_t) {
      return network_.dial(endpoint.toString());
    };
  }

 private:
  net::LoopbackNetwork network_;
};

class Tcp : public ClusterNetwork {
 public:
  explicit Tcp(int psCount) : ports_(net::freeLoopbackPorts(psCount)) {
    // A send to a peer that has gone must fail, not end the process: as the daemon (main.cpp).
    std::signal(SIGPIPE, SIG_IGN);
  }

  net::Endpoint psEndpoint(int index) const override { return {"127.0.0.1", ports_.at(index)}; }

  void listen(int index, const ps::Server& server, observe::Metrics& metrics,
              net::Serve serve) override {
    listeners_[index] = std::make_unique<net::Listener>(
        app::listenerOptions(server, ports_.at(index), metrics), std::move(serve));
  }

  void close(int index) override { listeners_.erase(index); }

  net::Dialer dialer(int, net::TrafficCounters* traffic) override {
    return net::tcpDialer(traffic);
  }

 private:
  const std::vector<int> ports_;
  std::map<int, std::unique_ptr<net::Listener>> listeners_;
};

}  // namespace

std::unique_ptr<ClusterNetwork> ClusterNetwork::make(Transport transport, int psCount) {
  if (transport == Transport::kLoopback) return std::make_unique<Loopback>();
  return std::make_unique<Tcp>(psCount);
}

}  // namespace pstrain::testing
