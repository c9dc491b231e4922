// The navigation flags (issue 41, docs/navigation.md): --nav, --nav_profiles,
// --nav_default_profile, --max_path_distance, --nav_max_tile_mb and --nav_rebuild_interval_ms.
#pragma once

#include "absl/status/status.h"
#include "server/exec/service_limits.h"
#include "server/nav/nav_profiles.h"

namespace voxcol::server {

// Fills `nav` and limits->max_path_distance from the flags. INVALID_ARGUMENT naming the flag for
// a malformed profile list, an unknown default profile, a non-positive distance or a tile bound
// out of range.
absl::Status NavFromFlags(NavOptions* nav, ServiceLimits* limits);

}  // namespace voxcol::server
