// The ValidateHit RPC's work (query_service.proto): decode, validate in core, judge, encode.
#pragma once

#include "absl/status/status.h"
#include "server/exec/query_ops.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// Judges the claim on the version the calling thread reads (the caller opens request.read_at).
// INVALID_ARGUMENT naming the field for bad input, DATA_LOSS for a chunk that failed to load;
// fills `response` without its version.
absl::Status RunValidateHit(const QueryEngine& engine, const ServiceLimits& limits,
                            const v1::ValidateHitRequest& request,
                            v1::ValidateHitResponse* response);

}  // namespace voxcol::server
