// A bounded map from idempotency key to the acknowledgement of the batch that first used it, so a
// retried batch gets the original answer instead of applying again. Oldest keys are forgotten
// first. Not thread-safe: EditBatcher guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace voxcol {

// What an applied edit batch answered.
struct BatchAck {
  uint64_t version = 0;         // world version the batch produced
  uint32_t changed_chunks = 0;  // chunks with at least one changed voxel
  bool replayed = false;  // this ack is the stored answer to an earlier batch with the same key
};

class IdempotencyTable {
 public:
  // Remembers at most `capacity` keys (0 remembers none).
  explicit IdempotencyTable(size_t capacity) : capacity_(capacity) {}

  struct Entry {
    uint64_t fingerprint =
        0;  // identifies the batch content, to detect a key reused for another batch
    BatchAck ack;
  };
  // The entry stored for `key`, if it is still remembered.
  std::optional<Entry> Find(const std::string& key) const;
  // Stores an entry for a key not yet present, forgetting the oldest key when full.
  void Insert(const std::string& key, const Entry& entry);
  size_t size() const { return entries_.size(); }

 private:
  size_t capacity_;
  absl::flat_hash_map<std::string, Entry> entries_;
  std::deque<std::string> order_;  // insertion order, oldest first
};

}  // namespace voxcol
