#include "core/voxel/idempotency_table.h"

namespace voxcol {

std::optional<IdempotencyTable::Entry> IdempotencyTable::Find(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void IdempotencyTable::Insert(const std::string& key, const Entry& entry) {
  if (capacity_ == 0 || entries_.contains(key)) return;
  while (entries_.size() >= capacity_) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  entries_.emplace(key, entry);
  order_.push_back(key);
}

}  // namespace voxcol
