#define BOOST_TEST_MODULE step_gate
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "pstrain/ps/step_gate.hpp"
#include "support/wait.hpp"

using namespace pstrain::ps;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(admits_up_to_its_capacity_without_waiting) {
  StepGate gate(2);
  StepGate::Place a(gate), b(gate);
  BOOST_TEST(!a.enter());
  BOOST_TEST(!b.enter());
  BOOST_TEST(gate.inside() == 2);
}

BOOST_AUTO_TEST_CASE(a_place_beyond_capacity_waits_for_one_to_leave) {
  StepGate gate(1, 1);
  StepGate::Place first(gate), second(gate);
  first.enter();
  std::atomic<bool> entered{false};
  bool waited = false;
  std::thread t([&] {
    waited = second.enter();
    entered = true;
  });
  // Until the first leaves, the second stays out.
  BOOST_REQUIRE(pstrain::testing::waitFor([&] { return gate.waiting() == 1; }, 5s));
  BOOST_TEST(!entered.load());
  first.leave();
  t.join();
  BOOST_TEST(waited);
  BOOST_TEST(gate.inside() == 1);
}

BOOST_AUTO_TEST_CASE(waiting_places_enter_in_the_order_they_came) {
  StepGate gate(1, 1);
  StepGate::Place holder(gate);
  holder.enter();
  std::vector<std::unique_ptr<StepGate::Place>> places;
  for (int i = 0; i < 4; ++i) places.push_back(std::make_unique<StepGate::Place>(gate));
  std::mutex mutex;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      places[size_t(i)]->enter();
      {
        std::lock_guard<std::mutex> lock(mutex);
        order.push_back(i);
      }
      places[size_t(i)]->leave();
    });
    // Each asks before the next comes.
    BOOST_REQUIRE(pstrain::testing::waitFor([&] { return gate.waiting() == i + 1; }, 5s));
  }
  holder.leave();
  for (auto& t : threads) t.join();
  BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(gate.inside() == 0);
}

BOOST_AUTO_TEST_CASE(a_place_keeps_its_place_for_its_turn) {
  StepGate gate(1, 3);
  StepGate::Place first(gate), second(gate);
  first.enter();
  std::atomic<bool> entered{false};
  std::thread t([&] {
    second.enter();
    entered = true;
  });
  BOOST_REQUIRE(pstrain::testing::waitFor([&] { return gate.waiting() == 1; }, 5s));
  first.leave();
  first.leave();
  // Two steps of a three-step turn: the first still holds the place, and enters again freely.
  BOOST_TEST(!first.enter());
  BOOST_TEST(gate.waiting() == 1);
  BOOST_TEST(!entered.load());
  first.leave();
  t.join();
  BOOST_TEST(gate.inside() == 1);
  // Its turn over, the first waits behind the second's.
  std::atomic<bool> back{false};
  std::thread u([&] {
    first.enter();
    back = true;
  });
  BOOST_REQUIRE(pstrain::testing::waitFor([&] { return gate.waiting() == 1; }, 5s));
  BOOST_TEST(!back.load());
  for (int i = 0; i < 3; ++i) second.leave();
  u.join();
  BOOST_TEST(back.load());
}

BOOST_AUTO_TEST_CASE(opening_lets_every_waiting_place_in) {
  StepGate gate(1);
  StepGate::Place holder(gate), waiting(gate);
  holder.enter();
  std::thread t([&] { waiting.enter(); });
  BOOST_REQUIRE(pstrain::testing::waitFor([&] { return gate.waiting() == 1; }, 5s));
  gate.open();
  t.join();
  StepGate::Place later(gate);
  BOOST_TEST(!later.enter());
}

BOOST_AUTO_TEST_CASE(a_place_destroyed_inside_leaves) {
  StepGate gate(1);
  {
    StepGate::Place gone(gate);
    gone.enter();
  }
  StepGate::Place next(gate);
  BOOST_TEST(!next.enter());
}

BOOST_AUTO_TEST_CASE(capacity_zero_never_waits) {
  StepGate gate(0);
  std::vector<std::unique_ptr<StepGate::Place>> places;
  for (int i = 0; i < 16; ++i) {
    places.push_back(std::make_unique<StepGate::Place>(gate));
    BOOST_TEST(!places.back()->enter());
  }
}
