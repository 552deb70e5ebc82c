#define BOOST_TEST_MODULE value_checksum
#include <boost/test/unit_test.hpp>

#include <memory>
#include <numeric>
#include <vector>

#include "pstrain/common/value_checksum.hpp"
#include "pstrain/ps/shard.hpp"

// The checksum of slices of the model's state that the run's history records: additive over
// disjoint ranges, and changed by any value, place or array changed.

using namespace pstrain;
using ps::Shard;

namespace {

std::vector<float> ramp(size_t count, float from) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), from);
  return values;
}

// A shard of `params` from global index `offset`, with Adam's moments after two steps.
std::unique_ptr<Shard> trained(std::vector<float> params, std::uint64_t offset) {
  Shard::Options options{1000, false, {}, {}, offset};
  const auto size = params.size();
  auto shard = std::make_unique<Shard>(std::move(params), std::make_unique<ps::Adam>(size, 0.1f),
                                       options);
  const auto gradient = ramp(size, -3.0f + float(offset));  // the same at each global index
  for (std::uint64_t step = 0; step < 2; ++step) shard->push(0, gradient.data(), step);
  return shard;
}

}  // namespace

BOOST_AUTO_TEST_CASE(slices_cut_anywhere_add_up_to_the_whole) {
  const auto params = ramp(100, 0.5f), first = ramp(100, 7.0f), second = ramp(100, -2.0f);
  const auto whole = valueChecksum(0, 100, params.data(), {first.data(), second.data()});
  for (size_t cut : {1, 37, 99}) {
    const auto head = valueChecksum(0, cut, params.data(), {first.data(), second.data()});
    const auto tail = valueChecksum(cut, 100 - cut, params.data() + cut,
                                    {first.data() + cut, second.data() + cut});
    BOOST_TEST(head + tail == whole);
  }
}

BOOST_AUTO_TEST_CASE(a_value_its_place_or_its_array_changed_changes_the_sum) {
  auto params = ramp(10, 1.0f);
  const auto moment = ramp(10, 20.0f);
  const auto sum = valueChecksum(0, 10, params.data(), {moment.data()});
  BOOST_TEST(valueChecksum(1, 10, params.data(), {moment.data()}) != sum);  // moved along
  BOOST_TEST(valueChecksum(0, 10, moment.data(), {params.data()}) != sum);  // arrays swapped
  std::swap(params[2], params[3]);
  BOOST_TEST(valueChecksum(0, 10, params.data(), {moment.data()}) != sum);
  std::swap(params[2], params[3]);
  params[9] = 0.0f;  // one value lost
  const auto zeroed = valueChecksum(0, 10, params.data(), {moment.data()});
  BOOST_TEST(zeroed != sum);
  params[9] = -0.0f;  // bits, not numbers
  BOOST_TEST(valueChecksum(0, 10, params.data(), {moment.data()}) != zeroed);
}

// Two shards of a cut hold what one shard of the whole holds, moments included: their checksums
// add up to its; a checkpoint's and a restore's are those of the values.
BOOST_AUTO_TEST_CASE(a_shards_checksum_is_of_its_values_where_they_lie) {
  const auto params = ramp(64, 0.25f);
  const auto whole = trained(params, 0);
  // (Cut where the optimizer's vector loops cut too: bit for bit the same steps.)
  const auto head = trained({params.begin(), params.begin() + 32}, 0);
  const auto tail = trained({params.begin() + 32, params.end()}, 32);
  BOOST_TEST(head->checksum() + tail->checksum() == whole->checksum());
  const auto snapshot = tail->serialize();
  BOOST_TEST(snapshot.checksum == tail->checksum());
  Shard restored(std::vector<float>(32), std::make_unique<ps::Adam>(32, 0.1f),
                 Shard::Options{1000, false, {}, {}, 32});
  restored.restore(snapshot.globalStep, snapshot.bytes);
  BOOST_TEST(restored.checksum() == tail->checksum());
  BOOST_TEST(restored.checksum() != head->checksum());
}

BOOST_AUTO_TEST_CASE(an_adopted_copy_is_summed_with_the_state_it_starts_with) {
  Shard shard(std::vector<float>(4), std::make_unique<ps::Adam>(4, 0.1f),
              Shard::Options{1000, false, {}, {}, 8});
  const auto copy = ramp(4, 3.0f);
  const std::vector<float> zeros(4);
  const auto adopted = shard.adopt(50, copy.data());
  BOOST_REQUIRE(adopted.has_value());
  BOOST_TEST(*adopted == valueChecksum(8, 4, copy.data(), {zeros.data(), zeros.data()}));
  BOOST_TEST(*adopted == shard.checksum());
}
