// The bodies of one world in the service: a core BodyWorld (single writer) behind a reader/writer
// lock, so that UpdateBodies (exclusive) and queries (shared, concurrent with each other) are safe,
// and a summary of the live bodies for ListBodies and the metrics.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/bodies/body_world.h"

namespace voxcol::server {

class WorldBodies {
 public:
  struct Live {
    uint64_t owner = 0;
    uint32_t layer = 0;
    int32_t part_count = 0;
  };
  struct Stats {
    int32_t bodies = 0;
    int64_t history_bytes = 0;
    uint64_t updates = 0;  // batches applied
  };

  // Precondition: BodyWorld::CheckLimits(limits) is OK.
  // Registers voxcol_body_updates_total, so that it is exported before the first batch.
  explicit WorldBodies(const BodyLimits& limits);

  // The world right after a batch (UpdateBodiesResponse).
  struct Applied {
    int64_t tick = 0, oldest_tick = 0;
    int32_t bodies = 0;
    int64_t history_bytes = 0;
  };
  // BodyWorld::Apply under the exclusive lock; counts the batch in voxcol_body_updates_total.
  // `applied` (may be null) receives the state the batch left, read under the same lock.
  absl::Status Apply(const BodyBatch& batch, Applied* applied = nullptr);

  // Runs `read(const BodyWorld&, const std::map<BodyId, Live>&)` under the shared lock: queries
  // run concurrently with each other, never with Apply.
  template <typename F>
  auto Read(F&& read) const {
    absl::ReaderMutexLock lock(&mu_);
    return read(world_, live_);
  }

  Stats stats() const;

 private:
  mutable absl::Mutex mu_;
  BodyWorld world_ ABSL_GUARDED_BY(mu_);
  std::map<BodyId, Live> live_ ABSL_GUARDED_BY(mu_);  // by id, for ListBodies
  std::atomic<uint64_t> updates_{0};
};

}  // namespace voxcol::server
