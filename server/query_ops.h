// One function per query kind: proto request in, proto response out, with validation. Shared by
// the unary RPCs and the batch stream so both answer identically.
#pragma once

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "server/service_limits.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// INVALID_ARGUMENT naming the field for bad input; otherwise fills `response` (without version).
// `index` is the world's broadphase (index.world() is the world).
absl::Status RunRaycast(const BroadphaseIndex& index, const ServiceLimits& limits, const v1::RaycastRequest& request,
                        v1::RaycastResponse* response);
absl::Status RunOverlap(const BroadphaseIndex& index, const ServiceLimits& limits, const v1::OverlapRequest& request,
                        v1::OverlapResponse* response);

}  // namespace voxcol::server
