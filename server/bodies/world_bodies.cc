#include "server/bodies/world_bodies.h"

#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

// voxcol_body_updates_total{result}: UpdateBodies batches applied and refused, every world.
Counter* UpdateCounter(bool ok) {
  static Counter* const applied = GetServerMetrics().registry.AddCounter(
      "voxcol_body_updates_total", "UpdateBodies batches, by result", "result=\"applied\"");
  static Counter* const refused = GetServerMetrics().registry.AddCounter(
      "voxcol_body_updates_total", "UpdateBodies batches, by result", "result=\"refused\"");
  return ok ? applied : refused;
}

}  // namespace

WorldBodies::WorldBodies(const BodyLimits& limits) : world_(limits) {
  UpdateCounter(true);
  UpdateCounter(false);
}

absl::Status WorldBodies::Apply(const BodyBatch& batch, Applied* applied) {
  absl::MutexLock lock(&mu_);
  absl::Status s = world_.Apply(batch);
  UpdateCounter(s.ok())->Add();
  if (!s.ok()) return s;
  for (const BodyDesc& b : batch.create) {
    live_[b.id] = {b.owner, b.layer, int32_t(b.parts.size())};
  }
  for (BodyId id : batch.remove) live_.erase(id);
  updates_.fetch_add(1, std::memory_order_relaxed);
  if (applied != nullptr) {
    *applied = {world_.latest_tick(), world_.oldest_tick(), world_.body_count(),
                world_.history_bytes()};
  }
  return absl::OkStatus();
}

WorldBodies::Stats WorldBodies::stats() const {
  absl::ReaderMutexLock lock(&mu_);
  return {world_.body_count(), world_.history_bytes(), updates_.load(std::memory_order_relaxed)};
}

}  // namespace voxcol::server
