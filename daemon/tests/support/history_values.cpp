#include "support/history_values.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace pstrain::testing {
// Named, so that its helpers keep to themselves in a unity build beside history_checker.cpp.
namespace values {
namespace {

using observe::HistoryKind;
using observe::HistoryRecord;
using observe::HistorySegment;

// One life of a ps, in the order the lives started.
struct Life {
  const HistorySegment* segment;
  // It began from a checkpoint, or without its own after an earlier life (its disk lost): what
  // it holds may be behind what the run had reached.
  bool afterLoss;

  std::string name() const {
    return fmt::format("ps {} (incarnation {:016x})", segment->header.index,
                       segment->header.incarnation);
  }
};

// A slice a re-cut froze.
struct Piece {
  const HistoryRecord* record;
  const Life* life;
};

// One re-cut, by its generation, as the ps and worker 0 recorded it.
struct Recut {
  std::vector<Piece> frozen;  // each life's last of this generation
  std::vector<const HistoryRecord*> installed;  // of the slices with parameters
  const HistoryRecord* outcome = nullptr;  // worker 0's record, where it made one
};

std::vector<Life> livesOf(const std::vector<const HistorySegment*>& run) {
  std::vector<Life> lives;
  for (const auto* segment : run) {
    if (segment->header.role == Role::kPs) lives.push_back({segment, false});
  }
  std::stable_sort(lives.begin(), lives.end(), [](const Life& a, const Life& b) {
    return a.segment->header.startedAt < b.segment->header.startedAt;
  });
  for (size_t i = 0; i < lives.size(); ++i) {
    const auto& records = lives[i].segment->records;
    const bool restored = std::any_of(records.begin(), records.end(), [](const auto& r) {
      return r.kind == HistoryKind::kRestored;
    });
    const bool earlier = std::any_of(lives.begin(), lives.begin() + long(i), [&](const Life& l) {
      return l.segment->header.index == lives[i].segment->header.index;
    });
    lives[i].afterLoss = restored || earlier;
  }
  return lives;
}

std::map<std::uint64_t, Recut> recutsOf(const std::vector<Life>& lives,
                                        const std::vector<const HistorySegment*>& run) {
  std::map<std::uint64_t, Recut> recuts;
  // Each ps's last freezes for a generation, by the one frozen (a freeze gives the cut served
  // and the slice kept from the re-cut before). A later life that froze for it replaces an
  // earlier life's: what that one froze died with it, and a resumed re-cut froze the later one.
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::map<std::uint64_t, Piece>> frozen;
  for (const auto& life : lives) {  // in the order they started
    std::set<std::uint64_t> frozenFor;  // by this life
    for (const auto& r : life.segment->records) {
      if (r.kind == HistoryKind::kCutFrozen) {
        auto& pieces = frozen[{life.segment->header.index, r.generation}];
        if (frozenFor.insert(r.generation).second) pieces.clear();
        pieces.insert_or_assign(r.value, Piece{&r, &life});
      }
      if (r.kind == HistoryKind::kCutInstalled && r.count > 0) {
        recuts[r.generation].installed.push_back(&r);
      }
    }
  }
  for (const auto& [key, pieces] : frozen) {
    for (const auto& [from, piece] : pieces) recuts[key.second].frozen.push_back(piece);
  }
  for (const auto* segment : run) {
    for (const auto& r : segment->records) {
      if (r.kind == HistoryKind::kRecut) recuts[r.generation].outcome = &r;
    }
  }
  return recuts;
}

// How many of [begin, end) the ranges cover.
std::uint64_t covered(std::uint64_t begin, std::uint64_t end,
                      std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t total = 0;
  std::uint64_t reached = begin;
  for (const auto& [from, to] : ranges) {
    const auto lo = std::max(from, reached);
    const auto hi = std::min(to, end);
    if (lo < hi) total += hi - lo;
    reached = std::max(reached, std::min(to, end));
  }
  return total;
}

// The checksum of the values the frozen slices give the parameter vector, as a re-cut assembles
// them (ps::CutAssembly: of overlapping slices, the newer generation's, then the later step's):
// where those that win are whole, disjoint and cover all `parameters`; else nothing.
std::optional<std::uint64_t> frozenSum(const Recut& recut, std::uint64_t parameters) {
  auto pieces = recut.frozen;
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return std::tie(a.record->value, a.record->globalStep) <
           std::tie(b.record->value, b.record->globalStep);
  });
  std::uint64_t sum = 0;
  std::uint64_t count = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> later;
  for (auto piece = pieces.rbegin(); piece != pieces.rend(); ++piece) {
    const auto& r = *piece->record;
    const auto hidden = covered(r.offset, r.offset + r.count, later);
    if (hidden != 0 && hidden != r.count) return std::nullopt;  // partly overwritten
    if (hidden == 0) {
      sum += r.checksum;
      count += r.count;
    }
    later.emplace_back(r.offset, r.offset + r.count);
  }
  if (count != parameters) return std::nullopt;
  return sum;
}

// The installed slices tile the parameter vector once: their checksum, or nothing.
std::optional<std::uint64_t> installedSum(const Recut& recut, std::uint64_t parameters) {
  auto slices = recut.installed;
  std::sort(slices.begin(), slices.end(),
            [](const HistoryRecord* a, const HistoryRecord* b) { return a->offset < b->offset; });
  std::uint64_t next = 0;
  std::uint64_t sum = 0;
  for (const auto* slice : slices) {
    if (slice->offset != next) return std::nullopt;
    next += slice->count;
    sum += slice->checksum;
  }
  if (next != parameters) return std::nullopt;
  return sum;
}

bool lostState(const Recut& recut) { return recut.outcome && recut.outcome->value > 0; }

void checkRecutValues(std::uint64_t generation, const Recut& recut, std::uint64_t parameters,
                      std::vector<std::string>& violations) {
  // Without worker 0's record, what it assembled, and whether it filled some from its copy, is
  // unknown.
  if (!recut.outcome) return;
  const auto installed = installedSum(recut, parameters);
  // Its record holds the checksum of what it gave the ps (where it covers every parameter).
  if (installed && recut.outcome->count == parameters && *installed != recut.outcome->checksum) {
    violations.push_back(fmt::format(
        "recut-values: the re-cut to generation {} installed values of checksum {:016x}, not "
        "the {:016x} worker 0 gave the ps",
        generation, *installed, recut.outcome->checksum));
    return;
  }
  // Where it filled some state from its own copy, the frozen slices do not say what it gave.
  if (lostState(recut)) return;
  const auto frozen = frozenSum(recut, parameters);
  if (!installed || !frozen || *installed == *frozen) return;
  violations.push_back(fmt::format(
      "recut-values: the re-cut to generation {} installed values of checksum {:016x}, not the "
      "{:016x} of the slices it froze, though it recorded no state lost",
      generation, *installed, *frozen));
}

void checkRecutStep(std::uint64_t generation, const Recut& recut,
                    std::vector<std::string>& violations) {
  if (recut.installed.empty() || recut.frozen.empty() || lostState(recut)) return;
  std::uint64_t installed = UINT64_MAX;
  for (const auto* r : recut.installed) installed = std::min(installed, r->globalStep);
  const auto highest = std::max_element(
      recut.frozen.begin(), recut.frozen.end(),
      [](const Piece& a, const Piece& b) { return a.record->globalStep < b.record->globalStep; });
  if (installed >= highest->record->globalStep) return;
  violations.push_back(fmt::format(
      "recut-step: the re-cut to generation {} installed step {}, below step {} that {} froze, "
      "and recorded no state lost",
      generation, installed, highest->record->globalStep, highest->life->name()));
}

// Lost state is explained by a ps the re-cut did not reach, or by a slice from a ps that had
// come back from a checkpoint or without one, behind the run's step: worker 0's copy replaced it.
void checkLostState(std::uint64_t generation, const Recut& recut,
                    std::vector<std::string>& violations) {
  if (!lostState(recut) || (recut.outcome->flags & observe::kHistoryYes)) return;
  const auto step = recut.outcome->globalStep;
  for (const auto& piece : recut.frozen) {
    if (piece.life->afterLoss && piece.record->globalStep < step) return;
  }
  violations.push_back(fmt::format(
      "lost-state: the re-cut to generation {} at step {} lost the optimizer state of {} "
      "parameters, though it reached every ps and none had come back behind that step",
      generation, step, recut.outcome->value));
}

// A thaw gives back the values frozen of the cut it serves again.
void checkThaws(const Life& life, std::vector<std::string>& violations) {
  std::map<std::uint64_t, const HistoryRecord*> frozen;  // the last, by the generation frozen
  for (const auto& r : life.segment->records) {
    if (r.kind == HistoryKind::kCutFrozen) frozen[r.value] = &r;
    if (r.kind != HistoryKind::kCutThawed || frozen.count(r.generation) == 0) continue;
    const auto* given = frozen.at(r.generation);
    if (std::tie(r.offset, r.count, r.checksum) !=
        std::tie(given->offset, given->count, given->checksum)) {
      violations.push_back(fmt::format(
          "recut-values: {} thawed generation {} at step {} with values other than it froze",
          life.name(), r.generation, r.globalStep));
    }
  }
}

// A restore holds the values of the last checkpoint recorded at that path, generation and step
// (one whose record a kill cut off is not known, and not checked).
void checkRestores(const std::vector<Life>& lives, std::vector<std::string>& violations) {
  using Key = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t>;
  std::map<Key, const HistoryRecord*> written;  // by ps, path hash, generation and step
  for (const auto& life : lives) {
    const auto ps = life.segment->header.index;
    for (const auto& r : life.segment->records) {
      if (r.kind != HistoryKind::kRestored) continue;
      const auto checkpoint = written.find(Key{ps, r.value, r.generation, r.globalStep});
      if (checkpoint == written.end() || checkpoint->second->checksum == r.checksum) continue;
      violations.push_back(fmt::format(
          "restore-values: {} restored step {} of generation {} with values of checksum "
          "{:016x}, not the {:016x} of the checkpoint written",
          life.name(), r.globalStep, r.generation, r.checksum, checkpoint->second->checksum));
    }
    // Its own checkpoints count from its next life on: a restore comes first in a life.
    for (const auto& r : life.segment->records) {
      if (r.kind == HistoryKind::kCheckpointWritten) {
        written[Key{ps, r.value, r.generation, r.globalStep}] = &r;
      }
    }
  }
}

}  // namespace
}  // namespace values

void checkValues(const std::vector<const observe::HistorySegment*>& run,
                 std::vector<std::string>& violations) {
  const auto lives = values::livesOf(run);
  std::uint64_t parameters = 0;
  for (const auto* segment : run) parameters = std::max(parameters, segment->header.parameterCount);
  for (const auto& [generation, recut] : values::recutsOf(lives, run)) {
    values::checkRecutValues(generation, recut, parameters, violations);
    values::checkRecutStep(generation, recut, violations);
    values::checkLostState(generation, recut, violations);
  }
  for (const auto& life : lives) values::checkThaws(life, violations);
  values::checkRestores(lives, violations);
}

}  // namespace pstrain::testing
