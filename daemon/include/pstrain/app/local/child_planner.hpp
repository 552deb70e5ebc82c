#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pstrain/app/local/child.hpp"
#include "pstrain/app/local/ps_hosts.hpp"
#include "pstrain/config/config.hpp"

namespace pstrain::app::local {

// The command lines of the cluster's children, as a StatefulSet's pod template and ordinals:
// the user's flags first, then each child's placement (role, index, ports, log dir), so that for
// a repeated flag the placement wins.
class ChildPlanner {
 public:
  // `self`: this binary; `args`: the user's flags, given to every child.
  ChildPlanner(std::string self, std::vector<std::string> args, const config::Config& settings,
               std::string psHostsPath);

  // Every ps and worker at the start, each with its own ports and log dir, the ps listed in
  // `psHosts`; the workers reach ps i at `fronts[i]`, if given. With `dataCopy`, the workers
  // beyond those that compute at once read the data set there.
  std::vector<Child> firstChildren(PsHosts& psHosts, const std::vector<int>& fronts,
                                   const std::optional<std::string>& dataCopy) const;

  // ps or worker `index`, listening on `port` and answering HTTP on `httpPort`.
  ChildSpec plan(const std::string& role, int index, int port, int httpPort) const;

 private:
  std::string self_;
  std::vector<std::string> args_;
  const config::Config& settings_;
  std::string psHostsPath_;
  std::string authKeyFile_;  // the key made for the children, if the user named none
};

}  // namespace pstrain::app::local
