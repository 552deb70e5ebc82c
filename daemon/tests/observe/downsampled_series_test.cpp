#define BOOST_TEST_MODULE downsampled_series
#include <boost/test/unit_test.hpp>

#include "pstrain/observe/downsampled_series.hpp"

using pstrain::observe::DownsampledSeries;

namespace {

std::vector<std::uint64_t> steps(const DownsampledSeries& series) {
  std::vector<std::uint64_t> out;
  for (const auto& p : series.points()) out.push_back(p.step);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(keeps_every_point_up_to_its_capacity) {
  DownsampledSeries series(4);
  for (std::uint64_t s = 0; s < 4; ++s) series.add({s, 100.0 + double(s), double(s) / 10});
  BOOST_TEST(steps(series) == (std::vector<std::uint64_t>{0, 1, 2, 3}));
  BOOST_TEST(series.json() == "[[0,100.000,0],[1,101.000,0.1],[2,102.000,0.2],[3,103.000,0.3]]");
}

BOOST_AUTO_TEST_CASE(a_long_run_stays_bounded_and_evenly_spread_from_the_first_to_the_latest) {
  const std::size_t capacity = 100;
  DownsampledSeries series(capacity);
  for (std::uint64_t added = 1; added <= 120000; ++added) {
    series.add({added, double(added), 1.0});
    auto kept = steps(series);
    BOOST_REQUIRE(kept.size() <= capacity + 1);
    BOOST_REQUIRE(kept.front() == 1u);
    BOOST_REQUIRE(kept.back() == added);
  }
  auto kept = steps(series);
  BOOST_TEST(kept.size() > capacity / 2);
  // Evenly spread: one stride between every two points but the latest.
  const auto stride = kept[1] - kept[0];
  for (std::size_t i = 1; i + 1 < kept.size(); ++i) BOOST_TEST(kept[i] - kept[i - 1] == stride);
  BOOST_TEST(kept.back() - kept[kept.size() - 2] <= stride);
}
