#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pstrain::app::local {

// The ps of the cluster, as its children read them: a file that changes when ps are added or
// removed (worker 0 re-cuts the parameters over them), as a ConfigMap does.
class PsHosts {
 public:
  explicit PsHosts(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  size_t count() const { return hosts_.size(); }
  void add(int port);
  // Takes the last ps out of the list and gives its host, which restore() puts back.
  std::string removeLast();
  void restore(std::string host);

 private:
  void write() const;

  std::string path_;
  std::vector<std::string> hosts_;
};

}  // namespace pstrain::app::local
