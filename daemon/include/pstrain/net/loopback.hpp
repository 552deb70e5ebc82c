#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pstrain/net/channel.hpp"
#include "pstrain/net/session.hpp"

namespace pstrain::net {

// An in-process network: servers listen on addresses, clients dial them and get a Channel whose
// other end a thread of the network serves, as a TCP listener would. Frames go through memory,
// so ps and workers run as threads of one test and a fault scenario takes a second.
class LoopbackNetwork {
 public:
  LoopbackNetwork() = default;
  // Closes every channel and waits for every session to end.
  ~LoopbackNetwork();

  LoopbackNetwork(const LoopbackNetwork&) = delete;
  LoopbackNetwork& operator=(const LoopbackNetwork&) = delete;

  // Serves `address`; `observer` (if any) is told of each session's refusal or end.
  void listen(const std::string& address, Serve serve, SessionObserver* observer);
  // Stops serving `address`, as a process that dies: its channels close, its sessions end.
  void close(const std::string& address);
  // A channel from the host `from` to whoever listens on `address`; UnreachableError when
  // nobody does or `from` is cut off.
  std::unique_ptr<Channel> dial(const std::string& from, const std::string& address);
  // Takes host `from` off the network, as a pulled cable: its channels close (each end sees its
  // peer gone) and its dials fail until restore(from).
  void cutOff(const std::string& from);
  void restore(const std::string& from);

 private:
  struct Frame;
  struct Pipe;
  class End;  // one end of a channel

  struct Session {
    std::string from;
    std::string address;
    std::shared_ptr<End> serverEnd;
    std::thread thread;
  };

  // Closes the channels of the sessions `ending` picks and waits for them to end.
  void endSessions(const std::function<bool(const Session&)>& ending);

  std::mutex mutex_;
  struct Listening {
    Serve serve;
    SessionObserver* observer;
  };
  std::map<std::string, Listening> listeners_;
  std::vector<Session> sessions_;
  std::set<std::string> cutOff_;  // hosts whose dials fail
  int dialed_ = 0;
};

}  // namespace pstrain::net
