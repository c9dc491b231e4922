// The body flags (issue 42, docs/bodies.md): --max_bodies, --max_parts_per_body,
// --body_history_ticks and --max_body_history_mb, every world's body registry limits.
#pragma once

#include "absl/status/status.h"
#include "core/bodies/body_types.h"

namespace voxcol::server {

// Fills `limits` from the flags. INVALID_ARGUMENT naming the flag for a value out of range.
absl::Status BodyLimitsFromFlags(BodyLimits* limits);

}  // namespace voxcol::server
