#include "pstrain/app/local/ps_hosts.hpp"

#include "pstrain/common/atomic_file.hpp"

namespace pstrain::app::local {

void PsHosts::add(int port) { restore("127.0.0.1:" + std::to_string(port)); }

std::string PsHosts::removeLast() {
  auto host = std::move(hosts_.back());
  hosts_.pop_back();
  write();
  return host;
}

void PsHosts::restore(std::string host) {
  hosts_.push_back(std::move(host));
  write();
}

void PsHosts::write() const {
  std::string list;
  for (const auto& host : hosts_) list += (list.empty() ? "" : ",") + host;
  writeFileAtomically(path_, list + "\n");
}

}  // namespace pstrain::app::local
