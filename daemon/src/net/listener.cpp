#include "pstrain/net/listener.hpp"

#include <Poco/Net/NetException.h>
#include <Poco/Net/PollSet.h>
#include <fmt/format.h>

#include <chrono>
#include <map>

#include <sys/socket.h>

#include "pstrain/common/error.hpp"
#include "pstrain/net/connection.hpp"

namespace pstrain::net {
namespace {

using Clock = std::chrono::steady_clock;

// The watcher wakes at least this often to close expired connections and see a stop.
const Poco::Timespan kWatchPeriod(0, 100000);

void setReceiveLowWater(Poco::Net::StreamSocket& socket, size_t bytes) {
  socket.setOption(SOL_SOCKET, SO_RCVLOWAT, int(bytes));
}

std::string addressOf(const Poco::Net::StreamSocket& socket) {
  try {
    return socket.peerAddress().toString();
  } catch (const Poco::Exception&) {
    return "(disconnected peer)";
  }
}

}  // namespace

Listener::Listener(Options options, Serve serve)
    : options_(std::move(options)),
      serve_(std::move(serve)),
      observer_(options_.observer ? *options_.observer : unobserved()) {
  try {
    // SO_REUSEADDR, so a restart binds while old connections linger in TIME_WAIT; not
    // SO_REUSEPORT, which Poco's bind(address, true) sets too: with it a second ps on the same
    // port bound without a word and the kernel split the workers' connections between the two.
    server_.bind(Poco::Net::SocketAddress("0.0.0.0", static_cast<Poco::UInt16>(options_.port)),
                 true, false);
    server_.listen(256);
  } catch (const Poco::Exception& e) {
    throw ListenError("cannot listen on port " + std::to_string(options_.port) + ": " +
                  e.displayText());
  }
  port_ = server_.address().port();
  watcher_ = std::thread([this] { watch(); });
}

Listener::~Listener() {
  stopping_ = true;
  watcher_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& session : sessions_) {
      if (session.ended) continue;
      try {
        session.socket.shutdown();  // ends a receive under way
      } catch (const Poco::Exception&) {
      }
    }
  }
  for (auto& session : sessions_) session.thread.join();
}

void Listener::watch() {
  Poco::Net::PollSet pollSet;
  pollSet.add(server_, Poco::Net::PollSet::POLL_READ);
  // Connections that have not yet sent a whole first frame, and when each must have.
  std::map<Poco::Net::Socket, std::pair<Poco::Net::StreamSocket, Clock::time_point>> pending;
  const auto handshake = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.handshakeSeconds));
  while (!stopping_) {
    Poco::Net::PollSet::SocketModeMap ready;
    try {
      ready = pollSet.poll(kWatchPeriod);
    } catch (const Poco::Exception& e) {
      observer_.listenerFailed("polling connections failed: " + e.displayText());
    }
    const auto now = Clock::now();
    for (const auto& [socket, mode] : ready) {
      if (socket == server_) {
        try {
          Poco::Net::StreamSocket accepted = server_.acceptConnection();
          setReceiveLowWater(accepted, options_.firstFrameBytes);
          pollSet.add(accepted, Poco::Net::PollSet::POLL_READ | Poco::Net::PollSet::POLL_ERROR);
          pending.emplace(accepted, std::make_pair(accepted, now + handshake));
        } catch (const Poco::Exception& e) {
          observer_.listenerFailed("accepting a connection failed: " + e.displayText());
        }
        continue;
      }
      auto it = pending.find(socket);
      if (it == pending.end()) continue;
      auto stream = it->second.first;
      pollSet.remove(stream);
      pending.erase(it);
      int available = 0;
      try {
        available = stream.available();
      } catch (const Poco::Exception&) {
      }
      if (available >= int(options_.firstFrameBytes)) {
        startSession(stream);  // its Connection sizes the buffer and sets the mark back to 1
      } else {
        // Readable with less than a frame: the peer closed (a probe, a port scan) or failed.
        stream.close();
      }
    }
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->second.second > now) {
        ++it;
        continue;
      }
      auto stream = it->second.first;
      observer_.rejected(addressOf(stream), fmt::format("no complete first frame within {} s",
                                                        options_.handshakeSeconds));
      pollSet.remove(stream);
      stream.close();
      it = pending.erase(it);
    }
    reapEndedSessions();
  }
}

void Listener::startSession(Poco::Net::StreamSocket socket) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& session = sessions_.emplace_back();
  session.socket = socket;
  session.thread = std::thread([this, &session] {
    try {
      Connection connection(session.socket, options_.maxPayload, options_.traffic);
      connection.setReceiveTimeout(options_.handshakeSeconds);
      runSession(connection, serve_, &observer_);
    } catch (const Poco::Exception&) {
      // The socket failed before the session began: nothing to tell.
    }
    std::lock_guard<std::mutex> ending(mutex_);
    session.socket.close();  // the peer sees the end now, not when the session is reaped
    session.ended = true;
  });
}

void Listener::reapEndedSessions() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->ended) {
      it->thread.join();
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace pstrain::net
