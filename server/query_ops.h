// One function per query kind: proto request in, proto response out, with validation. Shared by
// the unary RPCs and the batch stream so both answer identically.
#pragma once

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/narrowphase_cache.h"
#include "server/service_limits.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// INVALID_ARGUMENT naming the field for bad input; otherwise fills `response` (without version).
// What queries run against: the world's broadphase index (index.world() is the world) and the
// lazily built chunk meshes and kD-trees of smooth queries. Both observe the world's edits.
struct QueryEngine {
  const BroadphaseIndex& index;
  NarrowphaseCache& cache;
  const World& world() const { return index.world(); }
};

absl::Status RunRaycast(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::RaycastRequest& request, v1::RaycastResponse* response);
// Box and sphere: broadphase precision. Posed: exact (OverlapShape), with the deepest penetration
// when include_penetration.
absl::Status RunOverlap(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::OverlapRequest& request, v1::OverlapResponse* response);
absl::Status RunSweep(const QueryEngine& engine, const ServiceLimits& limits,
                      const v1::SweepRequest& request, v1::SweepResponse* response);
absl::Status RunContacts(const QueryEngine& engine, const ServiceLimits& limits,
                         const v1::ContactsRequest& request, v1::ContactsResponse* response);

}  // namespace voxcol::server
