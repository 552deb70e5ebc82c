#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pstrain/config/config.hpp"
#include "pstrain/net/endpoint.hpp"
#include "pstrain/net/listener.hpp"
#include "pstrain/observe/history_recorder.hpp"
#include "pstrain/ps/client.hpp"
#include "pstrain/ps/server.hpp"
#include "pstrain/worker/trainer.hpp"

namespace pstrain::app {

// What each part needs of the configuration, and nothing more: the ps and the worker never see
// the whole Config. The shared key is read from its file here.

// Ps `index`: its slice of the seeded initial model, its optimizer, the run and the barrier.
ps::ServerOptions serverOptions(const config::Config& settings, int index);

// Worker `index`, talking to the ps at `ps` (in shard order).
ps::ClientOptions clientOptions(const config::Config& settings, int index,
                                std::vector<net::Endpoint> ps);

// Worker `index`'s coordinator of re-cuts: worker 0, the chief, makes every re-cut, so there is
// one at a time; the other workers have none (null) and follow its cut.
std::unique_ptr<ps::RecutCoordinator> recutCoordinator(int index, ps::ClientObserver& observer);

worker::TrainerOptions trainerOptions(const config::Config& settings, int index);

// The recorder of `role` `index`'s history into `path`, where the settings record one
// (recordHistory; else none). A worker's `incarnation` is its client's; a ps draws one (0).
std::unique_ptr<observe::HistoryRecorder> historyRecorder(const config::Config& settings,
                                                          Role role, int index,
                                                          const std::string& path,
                                                          std::uint64_t incarnation = 0);

// How ps `server` listens for workers on `port` (0: any free one): a connection gets a thread
// once its whole hello is in; its bytes are counted in `traffic`, and `rejected` is told of each
// connection refused.
net::Listener::Options listenerOptions(const ps::Server& server, int port,
                                       net::TrafficCounters* traffic,
                                       net::SessionObserver* observer);

}  // namespace pstrain::app
