#include "server/app/nav_flags.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(bool, nav, true,
          "Navigation: one navmesh per world for FindPath (Recast/Detour tiles built lazily, "
          "rebuilt after edits in the background); false: FindPath answers FAILED_PRECONDITION");
ABSL_FLAG(std::string, nav_profiles, "",
          "Named agent profiles of every world, 'name:key=value,...;name2:...' with keys radius, "
          "height, max_climb, max_slope_degrees, can_jump, jump_height, can_swim (world units, "
          "degrees, true/false), e.g. 'small:radius=0.3,height=1;swimmer:can_swim=true'. A "
          "profile 'default' (radius 0.5, height 2, max_climb 1, 45 degrees) always exists unless "
          "defined here");
ABSL_FLAG(std::string, nav_default_profile, "default",
          "The profile of FindPath requests that name none (one of --nav_profiles or 'default')");
ABSL_FLAG(double, max_path_distance, 3000,
          "Largest FindPath max_distance (world units), and the one used when a request gives 0");
ABSL_FLAG(
    int64_t, nav_max_tile_mb, 256,
    "Navmesh tile data each agent profile's mesh of a world holds, MiB; past it the least "
    "recently searched tiles are dropped and built again when a path needs them; 0: no bound");
ABSL_FLAG(int32_t, nav_rebuild_interval_ms, 20,
          "How often a background thread rebuilds navmesh tiles that edits made stale; 0: never "
          "(the next path through them rebuilds them)");

namespace voxcol::server {

absl::Status NavFromFlags(NavOptions* nav, ServiceLimits* limits) {
  nav->enabled = absl::GetFlag(FLAGS_nav);
  absl::StatusOr<NavProfiles> profiles =
      ParseNavProfiles(absl::GetFlag(FLAGS_nav_profiles), absl::GetFlag(FLAGS_nav_default_profile));
  if (!profiles.ok()) return profiles.status();
  nav->profiles = *std::move(profiles);
  const double distance = absl::GetFlag(FLAGS_max_path_distance);
  if (!std::isfinite(distance) || distance <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_path_distance must be > 0 (world units), got ", distance));
  }
  limits->max_path_distance = float(distance);
  const int64_t tile_mb = absl::GetFlag(FLAGS_nav_max_tile_mb);
  if (tile_mb < 0 || tile_mb > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--nav_max_tile_mb must be in [0, 2^30] (MiB; 0: no bound), got ", tile_mb));
  }
  nav->settings.max_tile_bytes_per_mesh = tile_mb << 20;
  nav->rebuild_interval =
      absl::Milliseconds(std::max(0, absl::GetFlag(FLAGS_nav_rebuild_interval_ms)));
  return absl::OkStatus();
}

}  // namespace voxcol::server
