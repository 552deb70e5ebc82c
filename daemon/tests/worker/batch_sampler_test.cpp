#define BOOST_TEST_MODULE batch_sampler
#include <boost/test/unit_test.hpp>

#include <set>

#include "pstrain/worker/batch_sampler.hpp"

using pstrain::worker::BatchSampler;
using pstrain::worker::partOf;

BOOST_AUTO_TEST_CASE(the_parts_of_any_count_of_workers_cover_the_set_once) {
  for (std::uint32_t count = 1; count <= 7; ++count) {
    size_t next = 0;
    for (std::uint32_t rank = 0; rank < count; ++rank) {
      const auto part = partOf(1001, rank, count);
      BOOST_TEST(part.begin == next, "part " << rank << " of " << count);
      BOOST_TEST(part.end > part.begin);
      next = part.end;
    }
    BOOST_TEST(next == 1001u);
  }
}

BOOST_AUTO_TEST_CASE(an_epoch_draws_every_example_of_its_part_once) {
  BatchSampler sampler(100, 5, 1);
  BOOST_TEST(sampler.slice().begin == 0u);
  BOOST_TEST(sampler.slice().end == 100u);  // the whole set until divided
  sampler.divide(1, 4);                      // examples [25, 50)
  std::multiset<std::uint32_t> drawn;
  for (int batch = 0; batch < 5; ++batch) {
    const auto* indices = sampler.next();
    drawn.insert(indices, indices + 5);
  }
  std::multiset<std::uint32_t> part;
  for (std::uint32_t i = 25; i < 50; ++i) part.insert(i);
  BOOST_TEST((drawn == part));
}

BOOST_AUTO_TEST_CASE(a_new_division_samples_the_new_part_at_once) {
  BatchSampler sampler(90, 3, 7);
  sampler.divide(0, 3);  // [0, 30)
  sampler.next();
  sampler.divide(1, 2);  // a worker left: [45, 90)
  BOOST_TEST(sampler.slice().begin == 45u);
  BOOST_TEST(sampler.slice().end == 90u);
  for (int batch = 0; batch < 30; ++batch) {
    const auto* indices = sampler.next();
    for (int i = 0; i < 3; ++i) {
      BOOST_TEST_REQUIRE(indices[i] >= 45u);
      BOOST_TEST_REQUIRE(indices[i] < 90u);
    }
  }
}
