// One function per query kind: proto request in, proto response out, with validation. Shared by
// the unary RPCs and the batch stream so both answer identically.
#pragma once

#include "absl/status/status.h"
#include "core/voxel/world.h"
#include "server/service_limits.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// INVALID_ARGUMENT naming the field for bad input; otherwise fills `response` (without version).
absl::Status RunRaycast(const World& world, const ServiceLimits& limits, const v1::RaycastRequest& request,
                        v1::RaycastResponse* response);

}  // namespace voxcol::server
