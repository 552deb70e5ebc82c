#include "support/cluster_network.hpp"

#include <Poco/Exception.h>

#include <csignal>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "pstrain/app/role_options.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/net/free_ports.hpp"
#include "pstrain/net/listener.hpp"
#include "pstrain/net/loopback.hpp"

namespace pstrain::testing {
namespace {

std::string hostOf(int worker) { return "worker-" + std::to_string(worker); }

class Loopback : public ClusterNetwork {
 public:
  net::Endpoint psEndpoint(int index) const override {
    return {"ps-" + std::to_string(index), 8000};
  }
  void listen(int index, const ps::Server&, net::TrafficCounters*,
              net::SessionObserver* observer, net::Serve serve) override {
    network_.listen(psEndpoint(index).toString(), std::move(serve), observer);
  }
  void close(int index) override { network_.close(psEndpoint(index).toString()); }
  net::Dialer dialer(int worker, net::TrafficCounters*) override {
    return [this, host = hostOf(worker)](const net::Endpoint& endpoint, std::uint32_t) {
      return network_.dial(host, endpoint.toString());
    };
  }
  void cutOff(int worker) override { network_.cutOff(hostOf(worker)); }
  void restore(int worker) override { network_.restore(hostOf(worker)); }

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

  void listen(int index, const ps::Server& server, net::TrafficCounters* traffic,
              net::SessionObserver* observer, net::Serve serve) override {
    listeners_[index] = std::make_unique<net::Listener>(
        app::listenerOptions(server, ports_.at(index), traffic, observer),
        std::move(serve));
  }

  void close(int index) override { listeners_.erase(index); }

  net::Dialer dialer(int worker, net::TrafficCounters* traffic) override {
    return [this, worker, traffic](const net::Endpoint& endpoint, std::uint32_t maxPayload) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        refuseIfCutOff(worker);
      }
      auto socket = net::connectOnce(endpoint);
      std::lock_guard<std::mutex> lock(mutex_);
      refuseIfCutOff(worker);  // cut off while it connected
      return std::make_unique<WorkerConnection>(*this, worker, socket, maxPayload, traffic);
    };
  }

  void cutOff(int worker) override {
    std::lock_guard<std::mutex> lock(mutex_);
    cutOff_.insert(worker);
    for (auto* connection : connections_) {
      if (connection->worker == worker) connection->breakOff();
    }
  }

  void restore(int worker) override {
    std::lock_guard<std::mutex> lock(mutex_);
    cutOff_.erase(worker);
  }

 private:
  // A worker's connection that the network can break from outside, as a pulled cable does.
  struct WorkerConnection : net::Connection {
    // Registers itself; the caller holds the network's mutex.
    WorkerConnection(Tcp& network, int worker, const Poco::Net::StreamSocket& socket,
                     std::uint32_t maxPayload, net::TrafficCounters* traffic)
        : net::Connection(socket, maxPayload, traffic),
          worker(worker),
          network(network),
          socket(socket) {
      network.connections_.insert(this);
    }
    ~WorkerConnection() override {
      std::lock_guard<std::mutex> lock(network.mutex_);
      network.connections_.erase(this);
    }
    // Both directions end: the worker's receive and send fail, the ps sees it leave.
    void breakOff() {
      try {
        socket.shutdown();
      } catch (const Poco::Exception&) {
      }
    }

    const int worker;
    Tcp& network;
    Poco::Net::StreamSocket socket;  // the Connection's, shared
  };

  // The caller holds the mutex.
  void refuseIfCutOff(int worker) const {
    if (cutOff_.count(worker)) {
      throw UnreachableError(hostOf(worker) + " is cut off from the network");
    }
  }

  const std::vector<int> ports_;
  std::map<int, std::unique_ptr<net::Listener>> listeners_;
  std::mutex mutex_;  // guards cutOff_ and connections_
  std::set<int> cutOff_;
  std::set<WorkerConnection*> connections_;
};

// TCP with a fault proxy between the workers and each ps: the workers dial the proxy, which
// forwards to the ps's listener.
class TcpThroughProxy : public Tcp {
 public:
  explicit TcpThroughProxy(int psCount) : Tcp(psCount) {
    for (int i = 0; i < psCount; ++i) {
      proxies_.push_back(std::make_unique<FaultProxy>(Tcp::psEndpoint(i), std::uint64_t(i + 1)));
    }
  }

  net::Endpoint psEndpoint(int index) const override { return proxies_.at(index)->endpoint(); }
  FaultProxy& proxy(int index) override { return *proxies_.at(index); }

 private:
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
};

}  // namespace

FaultProxy& ClusterNetwork::proxy(int) {
  throw std::logic_error("this transport has no fault proxy");
}

std::unique_ptr<ClusterNetwork> ClusterNetwork::make(Transport transport, int psCount) {
  switch (transport) {
    case Transport::kLoopback:
      return std::make_unique<Loopback>();
    case Transport::kTcp:
      return std::make_unique<Tcp>(psCount);
    case Transport::kTcpThroughProxy:
      return std::make_unique<TcpThroughProxy>(psCount);
  }
  throw std::logic_error("unknown transport");
}

}  // namespace pstrain::testing
