#include "pstrain/ps/cut_assembly.hpp"

#include <algorithm>

namespace pstrain::ps {

CutAssembly::CutAssembly(const float* copy, size_t parameterCount, std::uint64_t generation,
                         std::uint64_t globalStep)
    : parameterCount_(parameterCount),
      copy_(copy, copy + parameterCount),
      copyGeneration_(generation),
      copyStep_(globalStep),
      generation_(generation) {}

bool CutAssembly::copyIsNewer(const net::SliceState& state) const {
  return std::tie(copyGeneration_, copyStep_) > std::tie(state.generation, state.globalStep);
}

void CutAssembly::add(const net::SliceState& state, const std::vector<float>& values) {
  if (copyIsNewer(state)) return;
  given_.push_back({state, values});
  generation_ = std::max(generation_, state.generation);
  // Oldest first: a later one written over it wins.
  std::stable_sort(given_.begin(), given_.end(), [](const Given& a, const Given& b) {
    return std::tie(a.state.generation, a.state.globalStep) <
           std::tie(b.state.generation, b.state.globalStep);
  });
}

int CutAssembly::fromPs() const {
  int count = 0;
  for (const auto& given : given_) {
    if (given.state.generation == generation_) count = int(given.state.psCount);
  }
  return count;
}

std::uint64_t CutAssembly::globalStep() const {
  std::uint64_t step = copyGeneration_ == generation_ ? copyStep_ : 0;
  for (const auto& given : given_) {
    if (given.state.generation == generation_) step = std::max(step, given.state.globalStep);
  }
  return step;
}

std::vector<bool> CutAssembly::covered() const {
  std::vector<bool> covered(parameterCount_, false);
  for (const auto& given : given_) {
    std::fill_n(covered.begin() + long(given.state.offset), given.state.count, true);
  }
  return covered;
}

std::uint64_t CutAssembly::movedState() const {
  const auto given = covered();
  return std::uint64_t(std::count(given.begin(), given.end(), true));
}

std::optional<ShardRange> CutAssembly::uncovered() const {
  const auto given = covered();
  const auto begin = std::find(given.begin(), given.end(), false);
  if (begin == given.end()) return std::nullopt;
  const auto end = std::find(begin, given.end(), true);
  return ShardRange{size_t(begin - given.begin()), size_t(end - begin)};
}

net::SliceState CutAssembly::slice(std::uint64_t generation, int psCount, int index,
                                   ShardRange range, std::vector<float>& values) const {
  std::uint32_t moments = 0;
  double scalars[2] = {1.0, 1.0};
  for (const auto& given : given_) {  // the newest's, the last
    moments = std::max(moments, given.state.moments);
    scalars[0] = given.state.scalars[0];
    scalars[1] = given.state.scalars[1];
  }
  const size_t count = range.count;
  values.assign(count * (1 + moments), 0.0f);
  std::copy_n(copy_.begin() + long(range.offset), count, values.begin());
  const size_t begin = range.offset;
  const size_t end = range.offset + count;
  for (const auto& given : given_) {
    const auto& state = given.state;
    const size_t from = std::max<size_t>(begin, state.offset);
    const size_t to = std::min<size_t>(end, state.offset + state.count);
    if (from >= to) continue;
    // Parameters, then each moment this slice holds, into the same arrays of the new slice.
    for (std::uint32_t array = 0; array <= std::min(moments, state.moments); ++array) {
      const auto source = given.values.begin() + long(array * state.count + from - state.offset);
      std::copy(source, source + long(to - from),
                values.begin() + long(array * count + from - begin));
    }
  }
  return net::SliceState{generation, std::uint32_t(psCount), std::uint32_t(index),
                         range.offset, count, globalStep(), moments, {scalars[0], scalars[1]}};
}

}  // namespace pstrain::ps
