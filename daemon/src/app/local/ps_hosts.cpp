#include "pstrain/app/local/ps_hosts.hpp"

#include "pstrain/common/atomic_file.hpp"

namespace pstrain::app::local {

void PsHosts::add(int port) {
  hosts_.push_back("127.0.0.1:" + std::to_string(port));
  write();
}

void PsHosts::removeLast() {
  hosts_.pop_back();
  write();
}

void PsHosts::write() const {
  std::string list;
  for (const auto& host : hosts_) list += (list.empty() ? "" : ",") + host;
  writeFileAtomically(path_, list + "\n");
}

}  // namespace pstrain::app::local
