#include "support/history_checker.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "pstrain/common/error.hpp"
#include "support/history_values.hpp"

namespace pstrain::testing {
namespace {

using observe::HistoryKind;
using observe::HistoryRecord;
using observe::HistorySegment;

bool yes(const HistoryRecord& record) { return record.flags & observe::kHistoryYes; }

// One cut as one life of a ps served it.
struct ServedCut {
  std::optional<std::uint64_t> base;  // the step it started from
  int index = 0;
  std::uint64_t psCount = 0;
  bool outOfRun = false;
  std::vector<const HistoryRecord*> applied;  // since `base`
  // Steps a worker's later copy undid (Shard::adopt), each run of them with the step it started
  // from: taken on parameters older than the copy.
  std::vector<std::pair<std::uint64_t, std::vector<const HistoryRecord*>>> undone;

  std::vector<const HistoryRecord*> everApplied() const {
    std::vector<const HistoryRecord*> all;
    for (const auto& [from, pushes] : undone) all.insert(all.end(), pushes.begin(), pushes.end());
    all.insert(all.end(), applied.begin(), applied.end());
    return all;
  }
};

// One life of a ps: its segment, and what it did to each generation of the cut.
struct PsLife {
  const HistorySegment* segment;
  std::map<std::uint64_t, ServedCut> cuts;  // by generation
  std::optional<std::uint64_t> servedGeneration;  // the cut it started with
  std::optional<std::uint64_t> servedStep;
  std::optional<std::uint64_t> restoredStep;
  std::vector<std::uint64_t> recovered;  // the steps of the workers' copies it adopted
  // The checkpoints it wrote, in order: generation and step.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> checkpoints;
  std::uint64_t reached = 0;  // the highest step it recorded
  // A later life of the same ps followed (a kill, a stop): a push a thread of this one had
  // applied may have gone unrecorded, at most one for each worker that pushed to it.
  bool cutShort = false;
  std::uint64_t unrecorded = 0;

  std::string name() const {
    return fmt::format("ps {} (incarnation {:016x})", segment->header.index,
                       segment->header.incarnation);
  }
};

// The cut the ps started with goes on from the copy it adopted last, each copy undoing the steps
// taken since the one before (or the start). A copy is adopted only later than the shard's step,
// so each push's step tells which run of steps it went into, whatever order its record and the
// copy's were written in by their threads.
void adoptCopies(ServedCut& cut, std::vector<std::uint64_t> adopted) {
  std::sort(adopted.begin(), adopted.end());
  std::map<std::uint64_t, std::vector<const HistoryRecord*>> runs;  // by the step they start from
  for (const auto* push : cut.applied) {
    const auto after = std::upper_bound(adopted.begin(), adopted.end(), push->globalStep);
    runs[after == adopted.begin() ? cut.base.value_or(0) : *(after - 1)].push_back(push);
  }
  cut.base = adopted.back();
  cut.applied = std::move(runs[adopted.back()]);
  runs.erase(adopted.back());
  cut.undone.assign(runs.begin(), runs.end());
}

PsLife readLife(const HistorySegment& segment) {
  PsLife life{&segment, {}, {}, {}, {}, {}, {}};
  for (const auto& r : segment.records) {
    switch (r.kind) {
      case HistoryKind::kServing:
      case HistoryKind::kCutInstalled: {
        auto& cut = life.cuts[r.generation];
        cut.base = r.globalStep;
        cut.index = int(r.peer);
        cut.psCount = r.value;
        cut.outOfRun = r.flags & observe::kHistoryOutOfRun;
        if (r.kind == HistoryKind::kServing) {  // where this life started
          life.servedGeneration = r.generation;
          life.servedStep = r.globalStep;
        }
        break;
      }
      case HistoryKind::kPushApplied: life.cuts[r.generation].applied.push_back(&r); break;
      case HistoryKind::kRestored: life.restoredStep = r.globalStep; break;
      case HistoryKind::kShardRecovered: life.recovered.push_back(r.globalStep); break;
      case HistoryKind::kCheckpointWritten:
        life.checkpoints.emplace_back(r.generation, r.globalStep);
        break;
      default: break;
    }
  }
  if (!life.recovered.empty() && life.servedGeneration) {
    adoptCopies(life.cuts[*life.servedGeneration], life.recovered);
  }
  std::set<std::uint32_t> pushers;
  for (const auto& r : segment.records) {
    if (r.kind == HistoryKind::kPushApplied) pushers.insert(r.peer);
    life.reached = std::max(life.reached, r.globalStep);
  }
  life.unrecorded = pushers.size();
  return life;
}

// Where the cut ends: its last step applied, or where it started.
std::uint64_t endOf(const ServedCut& cut) {
  std::uint64_t end = cut.base.value_or(0);
  for (const auto* push : cut.applied) end = std::max(end, push->globalStep);
  return end;
}

// One run of steps from `base`: each step once, in order (`unsure`: from where on steps may lack
// their records).
void checkSequence(const std::string& where, std::uint64_t base,
                   const std::vector<const HistoryRecord*>& applied, std::uint64_t unrecorded,
                   bool sync, std::vector<std::string>& violations) {
  std::map<std::uint64_t, std::vector<const HistoryRecord*>> steps;
  for (const auto* push : applied) steps[push->globalStep].push_back(push);
  const auto last = steps.rbegin()->first;
  const auto unsure = last - std::min(last, unrecorded);
  std::uint64_t expected = base + 1;
  for (const auto& [step, pushes] : steps) {
    if (step != expected && (step < expected || step <= unsure)) {
      violations.push_back(fmt::format(
          "step-sequence: {} went from step {} to step {}", where, expected - 1, step));
    }
    expected = step + 1;
    const auto closers = std::count_if(pushes.begin(), pushes.end(),
                                       [](const HistoryRecord* push) { return yes(*push); });
    if (!sync && pushes.size() > 1) {
      violations.push_back(fmt::format("step-sequence: {} took step {} {} times", where, step,
                                       pushes.size()));
    } else if (closers > 1 || (closers == 0 && step <= unsure)) {
      // (A sync step at the end of a life cut short may have lost its closer's record: the
      // kill came after a push waiting with it had recorded its own.)
      violations.push_back(fmt::format("step-sequence: {} closed step {} {} times", where,
                                       step, closers));
    }
    if (!sync) continue;
    std::set<std::uint32_t> counted;
    for (const auto* push : pushes) {
      // A push computed while `lag` answers were in flight (pushesInFlight) is that many
      // steps old at most.
      const auto lag = std::uint64_t(push->flags >> observe::kHistoryLagShift);
      if (push->value > lag) {
        violations.push_back(fmt::format(
            "sync-staleness: {} step {}: worker {}'s push {} has staleness {} (lag {})", where,
            step, push->peer, push->pushNumber, push->value, lag));
      }
      if (!counted.insert(push->peer).second) {
        violations.push_back(fmt::format("sync-worker-once: {} step {} counts worker {} twice",
                                         where, step, push->peer));
      }
    }
  }
}

void checkSteps(const PsLife& life, bool sync, std::vector<std::string>& violations) {
  for (const auto& [generation, cut] : life.cuts) {
    const auto where = fmt::format("{} generation {}", life.name(), generation);
    for (const auto& [from, pushes] : cut.undone) {
      checkSequence(where, from, pushes, 0, sync, violations);
    }
    if (cut.applied.empty()) continue;
    if (!cut.base) {
      violations.push_back(fmt::format(
          "step-sequence: {} applied pushes to a cut it never served", where));
      continue;
    }
    // The last steps of a life cut short may lack the records its kill lost.
    checkSequence(where, *cut.base, cut.applied, life.cutShort ? life.unrecorded : 0, sync,
                  violations);
  }
}

// The ps lives of a run in the order they started, each knowing whether a later one followed.
std::vector<PsLife> livesOf(const std::vector<const HistorySegment*>& run) {
  std::vector<PsLife> lives;
  for (const auto* segment : run) {
    if (segment->header.role == Role::kPs) lives.push_back(readLife(*segment));
  }
  std::stable_sort(lives.begin(), lives.end(), [](const PsLife& a, const PsLife& b) {
    return a.segment->header.startedAt < b.segment->header.startedAt;
  });
  for (size_t i = 0; i < lives.size(); ++i) {
    for (size_t later = i + 1; later < lives.size(); ++later) {
      const auto& ps = lives[later].segment->header.index;
      if (ps == lives[i].segment->header.index) lives[i].cutShort = true;
    }
  }
  return lives;
}

// (generation, index in the cut, incarnation, push number) of each push applied.
using AppliedAt = std::set<std::tuple<std::uint64_t, int, std::uint64_t, std::uint64_t>>;

// step-sequence, push-once and the steps beyond trainSteps; returns the pushes applied.
AppliedAt checkPushes(const std::vector<PsLife>& lives, bool sync, std::uint64_t trainSteps,
                      std::vector<std::string>& violations) {
  // (ps, incarnation, push number): the step it went into.
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>, std::uint64_t> appliedBy;
  AppliedAt appliedAt;
  for (const auto& life : lives) {
    checkSteps(life, sync, violations);
    const auto ps = life.segment->header.index;
    for (const auto& [generation, cut] : life.cuts) {
      for (const auto* push : cut.everApplied()) {
        auto [at, fresh] =
            appliedBy.emplace(std::make_tuple(ps, push->incarnation, push->pushNumber),
                              push->globalStep);
        if (!fresh) {
          violations.push_back(fmt::format(
              "push-once: {} applied push {} of worker {} (incarnation {:016x}) in step {} and "
              "again in step {}",
              life.name(), push->pushNumber, push->peer, push->incarnation, at->second,
              push->globalStep));
        }
        appliedAt.emplace(generation, cut.index, push->incarnation, push->pushNumber);
        if (push->globalStep > trainSteps) {
          violations.push_back(fmt::format("final-step: {} took step {} of a run of {}",
                                           life.name(), push->globalStep, trainSteps));
        }
      }
    }
  }
  return appliedAt;
}

// (ps, generation) pairs some worker saw go back: an answer at a lower step than one before. A ps
// answers at steps that only rise, but for a life that came back behind without the worker's copy.
std::set<std::pair<std::uint32_t, std::uint64_t>> seenGoingBack(
    const std::vector<const HistorySegment*>& run) {
  std::set<std::pair<std::uint32_t, std::uint64_t>> wentBack;
  for (const auto* segment : run) {
    if (segment->header.role != Role::kWorker) continue;
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> highest;
    for (const auto& r : segment->records) {
      if (r.kind != HistoryKind::kAnswered) continue;
      auto& seen = highest[{r.peer, r.generation}];
      if (r.globalStep < seen) wentBack.emplace(r.peer, r.generation);
      seen = std::max(seen, r.globalStep);
    }
  }
  return wentBack;
}

// A restart restores the checkpoint the ps wrote last in its lives before, or an older one
// followed by a worker's copy at least as new, or one that no worker that knew it further came
// back to (a stale checkpoint put back while those workers were gone: the restore records the
// steps lost): no older state that a worker saw, and none beyond the steps it reached. (A kill between a checkpoint's file and its record leaves a newer checkpoint than
// the last recorded.) After the run's last step (its last checkpoint the final one) an older
// restore that applies nothing loses nothing: the final parameters are worker 0's model, and a
// run that trains on (more steps) is another run, which starts over.
void checkRestoredSteps(const std::vector<PsLife>& lives,
                        const std::set<std::pair<std::uint32_t, std::uint64_t>>& wentBack,
                        std::vector<std::string>& violations) {
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> lastCheckpoint;  // by ps
  std::map<std::uint32_t, std::uint64_t> reached;  // by ps: the most its lives may have reached
  for (const auto& life : lives) {
    const auto ps = life.segment->header.index;
    const auto written = lastCheckpoint.find(ps);
    if (life.restoredStep) {
      const auto step = *life.restoredStep;
      const auto resumed =
          life.recovered.empty() ? step
                                 : std::max(step, *std::max_element(life.recovered.begin(),
                                                                    life.recovered.end()));
      const bool applied = std::any_of(life.cuts.begin(), life.cuts.end(), [](const auto& cut) {
        return !cut.second.everApplied().empty();
      });
      const bool afterTheEnd =
          written != lastCheckpoint.end() &&
          written->second.second == life.segment->header.trainSteps && !applied;
      if (written != lastCheckpoint.end() && life.servedGeneration.value_or(UINT64_MAX) ==
                                                 written->second.first &&
          resumed < written->second.second && !afterTheEnd &&
          wentBack.count({ps, written->second.first})) {
        violations.push_back(fmt::format(
            "restore: {} restored step {} of generation {}, older than its last checkpoint, "
            "step {}, and took no later copy though a worker saw it go back",
            life.name(), step, written->second.first, written->second.second));
      }
      if (step > reached[ps]) {
        violations.push_back(fmt::format(
            "restore: {} restored step {}, beyond the steps it had reached ({})", life.name(),
            step, reached[ps]));
      }
    } else if (life.servedStep.value_or(0) != 0) {
      violations.push_back(fmt::format("restore: {} started at step {} without a checkpoint",
                                       life.name(), *life.servedStep));
    }
    if (!life.checkpoints.empty()) lastCheckpoint[ps] = life.checkpoints.back();
    reached[ps] = std::max(reached[ps], life.reached + life.unrecorded);
  }
}

// Every ps of the last cut ends at trainSteps: the latest life that served each of its slices.
// The last cut is of the last generation, and of the ps count of the slice that went furthest:
// a ps added to the settings and taken out again before worker 0 re-cut served a configured cut
// of that generation (0) and another ps count, which no worker trained on.
void checkFinalStep(const std::vector<PsLife>& lives, std::uint64_t trainSteps,
                    std::vector<std::string>& violations) {
  std::uint64_t lastGeneration = 0;
  for (const auto& life : lives) {
    for (const auto& [generation, cut] : life.cuts) {
      if (cut.base) lastGeneration = std::max(lastGeneration, generation);
    }
  }
  std::uint64_t finalCount = 0;
  std::uint64_t furthest = 0;
  for (const auto& life : lives) {
    const auto cut = life.cuts.find(lastGeneration);
    if (cut == life.cuts.end() || !cut->second.base || cut->second.outOfRun) continue;
    if (finalCount == 0 || endOf(cut->second) > furthest) {
      finalCount = cut->second.psCount;
      furthest = endOf(cut->second);
    }
  }
  std::map<int, const PsLife*> finalSlices;
  for (const auto& life : lives) {
    const auto cut = life.cuts.find(lastGeneration);
    if (cut == life.cuts.end() || !cut->second.base || cut->second.outOfRun ||
        cut->second.psCount != finalCount) {
      continue;
    }
    auto& holder = finalSlices[cut->second.index];
    // A life after the slice's last step that applies nothing (a restart after the run's end)
    // leaves the slice where it ended.
    if (holder && cut->second.applied.empty() &&
        endOf(holder->cuts.at(lastGeneration)) == trainSteps) {
      continue;
    }
    holder = &life;
  }
  for (int index = 0; index < int(finalCount); ++index) {
    const auto served = finalSlices.find(index);
    if (served == finalSlices.end()) {
      violations.push_back(fmt::format(
          "final-step: no ps served slice {} of the last cut (generation {})", index,
          lastGeneration));
      continue;
    }
    const auto end = endOf(served->second->cuts.at(lastGeneration));
    if (end != trainSteps) {
      violations.push_back(fmt::format(
          "final-step: {} ended the last cut (generation {}, slice {}) at step {}, not {}",
          served->second->name(), lastGeneration, index, end, trainSteps));
    }
  }
}

void checkAnswers(const std::vector<const HistorySegment*>& run, const AppliedAt& appliedAt,
                  std::vector<std::string>& violations) {
  for (const auto* segment : run) {
    if (segment->header.role != Role::kWorker) continue;
    for (const auto& r : segment->records) {
      if (r.kind != HistoryKind::kAnswered || !yes(r) || r.pushNumber == 0) continue;
      const auto incarnation = segment->header.incarnation;
      if (!appliedAt.count({r.generation, int(r.peer), incarnation, r.pushNumber})) {
        violations.push_back(fmt::format(
            "answered-applied: worker {} (incarnation {:016x}) was told push {} was applied by "
            "ps {} of generation {}, which did not record it",
            segment->header.index, incarnation, r.pushNumber, r.peer, r.generation));
      }
    }
  }
}

void checkRun(const std::vector<const HistorySegment*>& run, std::vector<std::string>& violations) {
  const auto& first = run.front()->header;
  const auto lives = livesOf(run);
  if (lives.empty()) {
    violations.push_back(fmt::format("final-step: run {:016x} has no ps history", first.runId));
    return;
  }
  const auto appliedAt = checkPushes(lives, first.sync, first.trainSteps, violations);
  checkRestoredSteps(lives, seenGoingBack(run), violations);
  checkFinalStep(lives, first.trainSteps, violations);
  checkValues(run, violations);
  checkAnswers(run, appliedAt, violations);
}

}  // namespace

std::vector<std::string> checkHistories(const std::vector<HistorySegment>& segments) {
  std::map<std::uint64_t, std::vector<const HistorySegment*>> runs;
  for (const auto& segment : segments) runs[segment.header.runId].push_back(&segment);
  std::vector<std::string> violations;
  for (const auto& [runId, run] : runs) checkRun(run, violations);
  return violations;
}

std::vector<HistorySegment> readHistories(const std::vector<std::string>& dirs) {
  std::vector<std::string> files;
  for (const auto& dir : dirs) {
    std::error_code failed;
    std::filesystem::recursive_directory_iterator it(dir, failed);
    if (failed) throw IoError("cannot read " + dir + ": " + failed.message());
    for (const auto& entry : it) {
      if (!entry.is_regular_file()) continue;
      std::ifstream file(entry.path(), std::ios::binary);
      std::uint32_t magic = 0;
      file.read(reinterpret_cast<char*>(&magic), sizeof(magic));
      if (file && magic == observe::kHistoryMagic) files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<HistorySegment> segments;
  for (const auto& path : files) {
    auto read = observe::readHistory(path);
    segments.insert(segments.end(), read.begin(), read.end());
  }
  return segments;
}

}  // namespace pstrain::testing
