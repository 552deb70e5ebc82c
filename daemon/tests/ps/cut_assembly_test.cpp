#define BOOST_TEST_MODULE cut_assembly
#include <boost/test/unit_test.hpp>

#include <numeric>
#include <vector>

#include "pstrain/ps/cut_assembly.hpp"

using namespace pstrain;
using namespace pstrain::ps;

namespace {

// A frozen ps's slice of [offset, offset + count): parameters `base + i`, moments `10 * base + i`
// and `100 * base + i` for parameter i of the model.
std::vector<float> sliceValues(size_t offset, size_t count, float base) {
  std::vector<float> values;
  for (float scale : {1.0f, 10.0f, 100.0f}) {
    for (size_t i = offset; i < offset + count; ++i) values.push_back(scale * base + float(i));
  }
  return values;
}

}  // namespace

BOOST_AUTO_TEST_CASE(slices_of_two_ps_are_cut_again_for_three_with_their_moments) {
  std::vector<float> copy(10, -1.0f);
  CutAssembly assembly(copy.data(), copy.size(), 1, 39);
  assembly.add({1, 2, 0, 0, 5, 40, 2, {0.5, 0.25}}, sliceValues(0, 5, 1000));
  assembly.add({1, 2, 1, 5, 5, 41, 2, {0.5, 0.25}}, sliceValues(5, 5, 1000));
  BOOST_TEST(assembly.globalStep() == 41u);
  BOOST_TEST(assembly.lostState() == 0u);

  std::vector<float> values;
  // The middle third, [3, 6), crosses the old slices' boundary.
  auto state = assembly.slice(2, 3, 1, {3, 3}, values);
  BOOST_TEST(state.generation == 2u);
  BOOST_TEST(state.psCount == 3u);
  BOOST_TEST(state.offset == 3u);
  BOOST_TEST(state.globalStep == 41u);
  BOOST_TEST(state.moments == 2u);
  BOOST_TEST(state.scalars[1] == 0.25);
  const std::vector<float> expected{1003, 1004, 1005, 10003, 10004, 10005,
                                    100003, 100004, 100005};
  BOOST_TEST(values == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(what_no_ps_gives_comes_from_the_copy_with_its_state_lost) {
  std::vector<float> copy(10);
  std::iota(copy.begin(), copy.end(), 0.0f);
  CutAssembly assembly(copy.data(), copy.size(), 1, 39);
  assembly.add({1, 2, 0, 0, 5, 40, 2, {0.5, 0.25}}, sliceValues(0, 5, 1000));
  // A ps new to the run, at step 0 with its initial values, is older than the copy.
  assembly.add({0, 3, 2, 6, 4, 0, 2, {1, 1}}, sliceValues(6, 4, 7));
  BOOST_TEST(assembly.movedState() == 5u);
  BOOST_TEST(assembly.lostState() == 5u);
  BOOST_TEST(assembly.fromPs() == 2);
  std::vector<float> values;
  assembly.slice(2, 1, 0, {0, 10}, values);
  BOOST_TEST(values[4] == 1004.0f);
  BOOST_TEST(values[5] == 5.0f);            // the copy
  BOOST_TEST(values[10 + 5] == 0.0f);       // its first moment starts again
  BOOST_TEST(values[7] == 7.0f);            // the copy, not the new ps's initial values
}

BOOST_AUTO_TEST_CASE(the_newer_generation_wins_where_slices_overlap) {
  // A re-cut that installed ps 0's slice of generation 2 but not ps 1's, which thawed at 1.
  std::vector<float> copy(10, 0.0f);
  CutAssembly assembly(copy.data(), copy.size(), 1, 40);
  assembly.add({2, 2, 0, 0, 6, 50, 0, {1, 1}}, std::vector<float>(6, 2.0f));
  assembly.add({1, 2, 1, 5, 5, 55, 0, {1, 1}}, std::vector<float>(5, 1.0f));
  BOOST_TEST(assembly.generation() == 2u);
  BOOST_TEST(assembly.globalStep() == 50u);  // of the newest generation
  std::vector<float> values;
  assembly.slice(3, 1, 0, {0, 10}, values);
  BOOST_TEST(values[5] == 2.0f);
  BOOST_TEST(values[6] == 1.0f);
}

// Before the run's first step every optimizer state is at its start: what the copy (the initial
// parameters, for a worker 0 started again) gives loses none, and the gap is still told.
BOOST_AUTO_TEST_CASE(at_step_0_no_state_is_lost_and_the_gap_is_told) {
  std::vector<float> initial(10, 0.5f);
  CutAssembly assembly(initial.data(), initial.size(), 0, 0);
  assembly.add({0, 3, 0, 0, 4, 0, 2, {1.0, 1.0}}, sliceValues(0, 4, 1000));
  BOOST_TEST(assembly.globalStep() == 0u);
  BOOST_TEST(assembly.movedState() == 4u);
  BOOST_TEST(assembly.lostState() == 0u);
  const auto gap = assembly.uncovered();
  BOOST_REQUIRE(gap.has_value());
  BOOST_TEST(gap->offset == 4u);
  BOOST_TEST(gap->count == 6u);
  assembly.add({0, 3, 2, 8, 2, 0, 2, {1.0, 1.0}}, sliceValues(8, 2, 1000));
  BOOST_TEST(assembly.uncovered()->count == 4u);  // [4, 8): the first range none gives
}
