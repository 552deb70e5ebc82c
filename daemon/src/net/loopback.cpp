#include "pstrain/net/loopback.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>

#include "pstrain/common/error.hpp"

namespace pstrain::net {
struct LoopbackNetwork::Frame {
  MessageType type;
  std::vector<std::uint8_t> fields;
  std::vector<float> values;
};

// Frames one way; closing it ends both directions' waits.
struct LoopbackNetwork::Pipe {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Frame> frames;
  bool closed = false;
};

class LoopbackNetwork::End : public Channel {
 public:
  End(std::shared_ptr<Pipe> in, std::shared_ptr<Pipe> out, std::string peer)
      : in_(std::move(in)), out_(std::move(out)), peer_(std::move(peer)) {}
  ~End() override { close(); }

  void send(MessageType type, const std::vector<std::uint8_t>& fields, const float* values,
            size_t valueCount) override {
    Frame frame{type, fields, std::vector<float>(values, values + valueCount)};
    std::lock_guard<std::mutex> lock(out_->mutex);
    if (out_->closed) throw UnreachableError("connection to " + peer_ + " closed while sending");
    out_->frames.push_back(std::move(frame));
    out_->changed.notify_all();
  }

  const Incoming& receive() override {
    std::unique_lock<std::mutex> lock(in_->mutex);
    auto ready = [&] { return !in_->frames.empty() || in_->closed; };
    if (timeout_.count() > 0) {
      if (!in_->changed.wait_for(lock, timeout_, ready)) {
        throw UnreachableError("no data from " + peer_ + " within the idle timeout");
      }
    } else {
      in_->changed.wait(lock, ready);
    }
    if (in_->frames.empty()) throw UnreachableError("connection to " + peer_ + " closed by the peer");
    current_ = std::move(in_->frames.front());
    in_->frames.pop_front();
    incoming_.type = current_.type;
    incoming_.fields = current_.fields;
    incoming_.valueCount = current_.values.size();
    if (current_.type == MessageType::kError) {
      throw RefusedError(peer_ + " refused: " +
                         std::string(current_.fields.begin(), current_.fields.end()));
    }
    return incoming_;
  }

  void receiveValues(float* destination, size_t expected) override {
    if (incoming_.valueCount != expected) {
      throw ProtocolError(messageName(incoming_.type) + " carries " +
                          std::to_string(incoming_.valueCount) + " values where " +
                          std::to_string(expected) + " are expected");
    }
    // A slice of no parameters (a ps cut out of the run) has none, and no buffer to copy to.
    if (expected > 0) std::memcpy(destination, current_.values.data(), expected * sizeof(float));
    incoming_.valueCount = 0;
  }

  void setReceiveTimeout(double seconds) override {
    timeout_ = std::chrono::microseconds(std::int64_t(seconds * 1e6));
  }

  std::string peerName() const override { return peer_; }

  void close() {
    for (auto* pipe : {in_.get(), out_.get()}) {
      std::lock_guard<std::mutex> lock(pipe->mutex);
      pipe->closed = true;
      pipe->changed.notify_all();
    }
  }

 private:
  std::shared_ptr<Pipe> in_;
  std::shared_ptr<Pipe> out_;
  std::string peer_;
  std::chrono::microseconds timeout_{0};
  Frame current_;
  Incoming incoming_;
};

LoopbackNetwork::~LoopbackNetwork() {
  endSessions([](const Session&) { return true; });
}

void LoopbackNetwork::listen(const std::string& address, Serve serve, SessionObserver* observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  listeners_[address] = {std::move(serve), observer};
}

void LoopbackNetwork::close(const std::string& address) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    listeners_.erase(address);
  }
  endSessions([&](const Session& session) { return session.address == address; });
}

void LoopbackNetwork::cutOff(const std::string& from) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cutOff_.insert(from);
  }
  endSessions([&](const Session& session) { return session.from == from; });
}

void LoopbackNetwork::restore(const std::string& from) {
  std::lock_guard<std::mutex> lock(mutex_);
  cutOff_.erase(from);
}

void LoopbackNetwork::endSessions(const std::function<bool(const Session&)>& ending) {
  std::vector<Session> ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (ending(*it)) {
        ended.push_back(std::move(*it));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& session : ended) {
    session.serverEnd->close();
    session.thread.join();
  }
}

std::unique_ptr<Channel> LoopbackNetwork::dial(const std::string& from,
                                               const std::string& address) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cutOff_.count(from)) throw UnreachableError(from + " is cut off from the network");
  auto listener = listeners_.find(address);
  if (listener == listeners_.end()) {
    throw UnreachableError("nothing listens there");
  }
  auto toServer = std::make_shared<Pipe>();
  auto toClient = std::make_shared<Pipe>();
  const std::string client = from + " (loopback channel " + std::to_string(++dialed_) + ")";
  auto serverEnd = std::make_shared<End>(toServer, toClient, client);
  Session session{from, address, serverEnd, {}};
  session.thread = std::thread([serverEnd, listening = listener->second] {
    runSession(*serverEnd, listening.serve, listening.observer);
    serverEnd->close();
  });
  sessions_.push_back(std::move(session));
  return std::make_unique<End>(toClient, toServer, address);
}

}  // namespace pstrain::net
