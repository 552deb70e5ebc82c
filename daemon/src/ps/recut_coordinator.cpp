#include "pstrain/ps/recut_coordinator.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>


#include <fmt/format.h>

#include "pstrain/common/atomic_file.hpp"
#include "pstrain/common/error.hpp"
#include "pstrain/common/failpoint.hpp"
#include "pstrain/common/value_checksum.hpp"
#include "pstrain/model/layout.hpp"
#include "pstrain/ps/cut_assembly.hpp"

namespace pstrain::ps {
namespace {

// How long worker 0 tries to reach a ps that leaves the cut, for its slice and optimizer state:
// a pod scaled away may be gone already; its parameters are in worker 0's copy.
constexpr double kLeavingPsSeconds = 5;

std::string journalHeader(std::uint64_t runId) {
  return "pstrain: the ps holding run " + std::to_string(runId);
}

bool contains(const std::vector<net::Endpoint>& endpoints, const net::Endpoint& endpoint) {
  return std::find(endpoints.begin(), endpoints.end(), endpoint) != endpoints.end();
}

// The ps a re-cut freezes: those of the cut served and of the target.
struct Frozen {
  struct Ps {
    PsLink link;
    bool inTarget;  // no cut without it
  };
  std::vector<Ps> ps;
  std::string unreached;  // the ps leaving the cut that could not be reached

  bool holds(const net::Endpoint& endpoint) const {
    return std::any_of(ps.begin(), ps.end(),
                       [&](const Ps& frozen) { return frozen.link.endpoint == endpoint; });
  }
  void missed(const net::Endpoint& endpoint) {
    unreached += (unreached.empty() ? "" : ", ") + endpoint.toString();
  }
};

// Every ps of the cut served now and of `target`, each on a link of its own. Those lost or not
// connected now, and leaving the cut, are tried briefly: a pod scaled away may be gone already.
Frozen gather(PsLinks& links, const std::vector<net::Endpoint>& target,
              const std::vector<net::Endpoint>& remembered) {
  Frozen frozen;
  std::vector<net::Endpoint> leaving;
  auto leaves = [&](const net::Endpoint& endpoint) {
    if (!contains(target, endpoint) && !frozen.holds(endpoint) && !contains(leaving, endpoint)) {
      leaving.push_back(endpoint);
    }
  };
  for (auto& link : links.release()) {
    if (link.failure.empty() && !link.recut) {
      const bool inTarget = contains(target, link.endpoint);
      frozen.ps.push_back({std::move(link), inTarget});
    } else {
      leaves(link.endpoint);
    }
  }
  // No link holds a ps of the cut served last where this re-cut follows another one at once
  // (the settings changed again meanwhile) or a connection that found the ps serving different
  // cuts: those leaving give their slices and optimizer state all the same.
  for (const auto& endpoint : links.served()) leaves(endpoint);
  // A worker 0 started again knows the ps of the cut served from its journal alone.
  for (const auto& endpoint : remembered) leaves(endpoint);
  for (const auto& endpoint : leaving) {
    try {
      frozen.ps.push_back({links.open(endpoint, kLeavingPsSeconds), false});
    } catch (const UnreachableError&) {
      frozen.missed(endpoint);
    }
  }
  for (const auto& endpoint : target) {
    if (!frozen.holds(endpoint)) {
      frozen.ps.push_back({links.open(endpoint, links.options().peerTimeoutSeconds), true});
    }
  }
  return frozen;
}

// A ps of the copy's cut back behind the copy (killed, or started from an older checkpoint than
// its last) is given the copy's slice before it freezes, as a reconnecting worker gives it: it
// adopts it, and the slice it freezes is not older than the copy.
void giveCopies(Frozen& frozen, const float* copy, const PsLinks& links, std::uint64_t copyStep) {
  if (!copy) return;
  for (auto& ps : frozen.ps) {
    const auto& link = ps.link;
    // Of the cut served (not a new ps's configured cut of another ps count), behind the copy.
    const bool served = link.shard.generation == links.generation() &&
                        link.shard.psCount == links.served().size() &&
                        contains(links.served(), link.endpoint) && link.shard.count > 0;
    if (!served || link.globalStep >= copyStep) continue;
    try {
      giveCopy(ps.link, copyStep, copy);
    } catch (const UnreachableError&) {
      // the freeze finds it gone
    }
  }
}

// Each frozen ps stops applying pushes and gives its slice with its optimizer state, and the
// slice it kept from the re-cut before.
void freeze(Frozen& frozen, std::uint64_t generation, size_t parameterCount,
            CutAssembly& assembly) {
  for (auto& ps : frozen.ps) {
    auto& channel = *ps.link.channel;
    try {
      channel.send(net::MessageType::kCutFreeze, net::encode(net::CutFreeze{generation}));
      for (bool more = true; more;) {
        const auto& frame = channel.receive();
        if (frame.type != net::MessageType::kSliceState) {
          throw ProtocolError("expected slice-state but received " + net::messageName(frame.type));
        }
        const auto state = net::decodeSliceState(frame.fields, parameterCount);
        std::vector<float> values(state.count * (1 + state.moments));
        channel.receiveValues(values.data(), values.size());
        assembly.add(state, values);
        more = state.follows > 0;
      }
    } catch (const UnreachableError&) {
      if (ps.inTarget) throw;  // no cut without it: the frozen ps thaw, and it is tried again
      frozen.missed(ps.link.endpoint);
    }
    PSTRAIN_FAILPOINT("recut.after-freeze");
  }
}

// Sends a frozen ps a request of the re-cut and awaits its acknowledgement; a ps that leaves the
// cut may be gone.
void request(Frozen::Ps& ps, net::MessageType type, const std::vector<std::uint8_t>& fields,
             const std::vector<float>& values = {}) {
  try {
    ps.link.channel->send(type, fields, values.data(), values.size());
    ps.link.channel->receiveExpected(net::MessageType::kStatusReply);
  } catch (const UnreachableError&) {
    if (ps.inTarget) throw;
  }
}

// Each frozen ps holds its slice of the cut over `target`, or none where it leaves. Returns the
// checksum of the slices given.
std::uint64_t prepare(Frozen& frozen, const std::vector<net::Endpoint>& target,
                      std::uint64_t generation, size_t parameterCount,
                      const CutAssembly& assembly) {
  const int toPs = int(target.size());
  std::uint64_t checksum = 0;
  for (auto& ps : frozen.ps) {
    const int index = int(std::find(target.begin(), target.end(), ps.link.endpoint) -
                          target.begin());
    std::vector<float> values;
    const auto state =
        ps.inTarget ? assembly.slice(generation, toPs, index,
                                     shardRange(parameterCount, toPs, index), values)
                    : assembly.slice(generation, toPs, 0, {0, 0}, values);
    std::vector<const float*> moments;
    for (std::uint32_t m = 1; m <= state.moments; ++m) {
      moments.push_back(values.data() + m * state.count);  // a slice of no parameters has none
    }
    checksum += valueChecksum(state.offset, state.count, values.data(), moments);
    request(ps, net::MessageType::kSliceState, net::encode(state), values);
    PSTRAIN_FAILPOINT("recut.after-prepare");
  }
  return checksum;
}

// Every ps holds its slice: each serves it now, those of the new cut first, so that a ps that
// leaves, and is stopped once out of the run, keeps its slice until the new cut is served.
void commit(Frozen& frozen, std::uint64_t generation) {
  std::stable_partition(frozen.ps.begin(), frozen.ps.end(),
                        [](const Frozen::Ps& ps) { return ps.inTarget; });
  for (auto& ps : frozen.ps) {
    request(ps, net::MessageType::kCutCommit, net::encode(net::CutCommit{generation}));
    PSTRAIN_FAILPOINT("recut.after-commit");
  }
}

}  // namespace

RecutCoordinator::RecutCoordinator(ClientObserver& observer, std::string journal,
                                   std::uint64_t runId)
    : observer_(observer), journal_(std::move(journal)), runId_(runId) {
  std::ifstream in(journal_);
  std::string line;
  if (journal_.empty() || !std::getline(in, line) || line != journalHeader(runId_)) return;
  while (std::getline(in, line)) {
    try {
      remembered_.push_back(net::parseEndpoint(line));
    } catch (const ConfigError&) {
      remembered_.clear();  // not all of it: as if none
      return;
    }
  }
}

void RecutCoordinator::remember(const std::vector<net::Endpoint>& holders) {
  remembered_ = holders;
  if (journal_.empty()) return;
  std::filesystem::create_directories(std::filesystem::path(journal_).parent_path());
  std::string contents = journalHeader(runId_) + "\n";
  for (const auto& endpoint : holders) contents += endpoint.toString() + "\n";
  // A worker 0 that died of a full disk here would start again not knowing which ps hold the
  // slices of the cut served: it waits for room.
  writeFileWhenRoom(journal_, contents);
}

std::optional<std::vector<net::Endpoint>> RecutCoordinator::changedSettings(
    const PsLinks& links) {
  if (!links.options().currentPs) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  if (now < nextSettingsRead_) return std::nullopt;
  const std::chrono::duration<double> every(links.options().settingsEverySeconds);
  nextSettingsRead_ = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(every);
  auto target = links.currentPs();
  if (target == links.endpoints()) return std::nullopt;
  return target;
}

RecutResult RecutCoordinator::recut(PsLinks& links, const std::vector<net::Endpoint>& target,
                                    const float* copy) {
  const auto parameterCount = links.options().layout.parameterCount();
  // Our copy is of the last answers: as of the lowest step they said.
  const auto copyStep = links.copyStep();
  try {
    auto frozen = gather(links, target, remembered_);
    std::vector<net::Endpoint> holders;  // of the run's state until the new cut is served
    for (const auto& ps : frozen.ps) holders.push_back(ps.link.endpoint);
    remember(holders);
    std::uint64_t generation = links.generation();
    for (const auto& ps : frozen.ps) generation = std::max(generation, ps.link.shard.generation);
    ++generation;
    // No copy: the initial parameters, which are the run's as long as it has taken no step.
    const auto initial =
        copy ? std::vector<float>{} : model::initialParameters(links.options().layout,
                                                               links.options().seed);
    CutAssembly assembly(copy ? copy : initial.data(), parameterCount, links.generation(),
                         copyStep);
    giveCopies(frozen, copy, links, copyStep);
    freeze(frozen, generation, parameterCount, assembly);
    const auto gap =
        copy || assembly.globalStep() == 0 ? std::nullopt : assembly.uncovered();
    if (gap) {
      // Returning closes the links: every frozen ps serves its cut again.
      return {false, fmt::format("no ps gave parameters [{}, {}) and worker 0, started again, "
                                 "holds no copy of them: the re-cut stops, the ps serve the cut "
                                 "they served",
                                 gap->offset, gap->offset + gap->count)};
    }
    const auto checksum = prepare(frozen, target, generation, parameterCount, assembly);
    commit(frozen, generation);
    PSTRAIN_FAILPOINT("recut.before-report");
    links.serve(target);
    remember(target);
    observer_.recut({generation, assembly.fromPs(), int(target.size()), assembly.globalStep(),
                     assembly.movedState(), assembly.lostState(), frozen.unreached, checksum});
    return {};
  } catch (const UnreachableError& e) {
    return {false, e.what()};
  }
}

}  // namespace pstrain::ps
