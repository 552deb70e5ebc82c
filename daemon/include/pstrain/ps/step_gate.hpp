#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace pstrain::ps {

// Bounds how many workers compute a gradient at once: the bounded delay of the Parameter Server
// paper (Li et al. 2014), kept by ps 0 for the whole run. A worker enters when the ps answers it
// with parameters and leaves when its next request arrives; beyond the capacity, answers wait
// their turn, first come first served.
//
// Why: asynchronous workers compute on parameters that the others' pushes move on (staleness),
// and with more workers than cores a worker spends most of a step waiting for a core, so its
// parameters grow older by every push applied meanwhile. Held here instead, it starts from the
// parameters current when it is let in: with 8 workers on 2 cores and a capacity of 2, a push's
// staleness falls from 7 global steps to about 1.5 at the same steps/s.
class StepGate {
 public:
  // capacity 0: no bound, enter() never waits. A worker let in keeps its place for `turnSteps`
  // steps in a row before it goes behind those waiting.
  explicit StepGate(int capacity, int turnSteps = kTurnSteps)
      : capacity_(capacity), turnSteps_(turnSteps) {}

  // Steps of a turn. Each handover wakes a worker that has waited, with its caches cold, and
  // makes it pull the other ps's parameters again, while a push's staleness does not depend on
  // the turn: 8 workers on 2 cores at capacity 2 ran 895 global steps/s with turns of 1 step,
  // 1,004 with 8 and 1,047 with 32 (2 workers: 1,318).
  static constexpr int kTurnSteps = 32;

  // One worker's place: inside from enter() until the turn's last leave() (or its destruction).
  class Place {
   public:
    explicit Place(StepGate& gate) : gate_(gate) {}
    ~Place() { release(); }
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;

    // Waits until the worker may compute; true if it had to wait for another to leave.
    bool enter();
    // The worker's step is over; at the end of its turn it gives its place up.
    void leave();

   private:
    void release();

    StepGate& gate_;
    bool inside_ = false;
    int steps_ = 0;  // of this turn
  };

  // Lets everyone in from now on, waiting or not: training has ended or the ps stops.
  void open();

  int inside() const;
  int waiting() const;

 private:
  struct Waiter;

  mutable std::mutex mutex_;
  const int capacity_;
  const int turnSteps_;
  int inside_ = 0;
  std::deque<Waiter*> waiting_;  // in the order they came
  bool open_ = false;
};

}  // namespace pstrain::ps
