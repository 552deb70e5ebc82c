#pragma once

namespace pstrain::app::local {

// The scale requests made by signal: `kill -USR1` adds a worker and `kill -USR2` removes the
// newest, the launcher's `kubectl scale statefulset <release>-worker`; `kill -RTMIN` adds a ps
// and `kill -RTMIN+1` removes the newest, its `helm upgrade --set ps.number=N`. The handler only
// counts (the one state of the launcher at namespace scope: a handler reaches nothing else); the
// launcher's loop takes the counts.
class ScaleQueue {
 public:
  // Installs the handler of the four signals: from now on they count.
  void listen();

  struct Requests {
    int workersToAdd = 0;
    int workersToRemove = 0;
    int psToAdd = 0;
    int psToRemove = 0;
  };
  // The requests made since the last call.
  Requests take();
};

}  // namespace pstrain::app::local
