// Raycasts against the world.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/geometry/vec3.h"
#include "core/voxel/world.h"

namespace voxcol {

struct RayInput {
  Vec3 origin;             // world units; must lie inside the world bounds
  Vec3 direction;          // any non-zero length; normalized internally
  float max_distance = 0;  // world units along the normalized direction, > 0
};

enum class WaterMode {
  kPassThrough,    // water is ignored: rays hit the solid under it
  kStopAtSurface,  // the first water voxel stops the ray like a solid
};

struct RaySettings {
  WaterMode water = WaterMode::kPassThrough;
};

// Service-wide limits, configured by flags.
struct QueryLimits {
  float max_ray_distance = 4096.0f;  // world units
};

struct RayHit {
  bool hit = false;
  float distance = 0;  // world units from the origin along the normalized direction
  Vec3 position;       // world units: origin + distance * direction
  Vec3 normal;         // unit outward normal of the face that was hit; zero when started_inside
  Int3 voxel;          // voxel that was hit
  Voxel value;         // its material and occupancy
  bool started_inside = false;  // the origin voxel itself is filled; distance is 0
  // OK, or the error of a chunk along the ray that could not be loaded (e.g. DATA_LOSS for a
  // corrupt stored record); then the ray stopped there and the other fields mean nothing.
  absl::Status load_status;
};

// What a query cost; optional output.
struct QueryStats {
  uint32_t voxels_visited = 0;  // voxels stepped through inside chunks that were not skipped
  uint32_t chunks_visited = 0;  // chunks whose voxels were stepped through (skipped ones excluded)
};

// Checks a ray; the error message names the field (origin, direction, max_distance).
absl::Status ValidateRay(const World& world, const RayInput& ray, const QueryLimits& limits);

// Exact raycast against the blocky occupancy: a voxel is filled when IsSolid (or IsWater with
// kStopAtSurface). Walks voxels front to back after Amanatides & Woo, "A Fast Voxel Traversal
// Algorithm for Ray Tracing" (Eurographics 1987). The ray ends at max_distance or the world bounds.
// The walk goes chunk by chunk through the broadphase (RayChunkWalk): chunks whose masks are empty
// are skipped unread, and inside a chunk only voxels whose mask bit is set are read, from the
// chunk snapshot the masks were built from. A chunk that fails to load ends the walk with
// RayHit::load_status set, never reads as air.
// Precondition: ValidateRay(index.world(), ray, ...) is OK.
RayHit RaycastBlocky(const BroadphaseIndex& index, const RayInput& ray, const RaySettings& settings,
                     QueryStats* stats = nullptr);

}  // namespace voxcol
