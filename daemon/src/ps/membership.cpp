#include "pstrain/ps/membership.hpp"

#include <iterator>

namespace pstrain::ps {

void Membership::join(std::uint32_t worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto before = channels_.size();
  ++channels_[worker];
  // Told under the lock, so two changes at once reach `changed_` in the order they happened.
  if (channels_.size() != before) changed_(int(channels_.size()));
}

void Membership::leave(std::uint32_t worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = channels_.find(worker);
  if (it == channels_.end() || --it->second > 0) return;
  channels_.erase(it);
  changed_(int(channels_.size()));
}

Membership::Division Membership::divisionOf(std::uint32_t worker) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = channels_.find(worker);
  if (it == channels_.end()) return {0, 1};
  return {std::uint32_t(std::distance(channels_.begin(), it)), std::uint32_t(channels_.size())};
}

}  // namespace pstrain::ps
