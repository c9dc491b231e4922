// Raycasts against the world.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/geometry/vec3.h"
#include "core/query/query_types.h"
#include "core/voxel/world.h"

namespace voxcol {

struct RaycastInput {
  Vec3 origin;             // world units; must lie inside the world bounds
  Vec3 direction;          // any non-zero length; normalized internally
  float max_distance = 0;  // world units along the normalized direction, > 0
};

enum class WaterMode {
  kPassThrough,    // water is ignored: rays hit the solid under it
  kStopAtSurface,  // the first water voxel stops the ray like a solid
};

enum class RaycastMode {
  kSmooth,  // the marching-cubes surface (what players see)
  kBlocky,  // voxel faces of the blocky occupancy (Amanatides-Woo DDA)
};

struct RaycastSettings {
  WaterMode water = WaterMode::kPassThrough;
  RaycastMode mode = RaycastMode::kSmooth;  // read by Raycast(); the mode-specific calls ignore it
};

struct RaycastHit {
  bool hit = false;
  float distance = 0;  // world units from the origin along the normalized direction
  Vec3 position;       // world units: origin + distance * direction
  // Unit outward normal; zero when started_inside. Blocky: the voxel face. Smooth: the surface
  // normal (vertex normals interpolated over the triangle; facets alone tilt on curved surfaces).
  Vec3 normal;
  bool front_face = true;  // smooth: the ray enters the solid here (false: it leaves it)
  Int3 voxel;              // voxel that was hit (smooth: the dominant solid corner of the hit cell)
  Voxel value;             // its material and occupancy (smooth: material of the triangle hit)
  bool started_inside = false;  // the origin voxel itself is filled; distance is 0
  // OK, or the error of a chunk along the ray that could not be loaded (e.g. DATA_LOSS for a
  // corrupt stored record); then the ray stopped there and the other fields mean nothing.
  absl::Status load_status;
  ChunkKey chunk;         // smooth: chunk whose mesh holds the triangle; blocky: chunk of the voxel
  int32_t triangle = -1;  // smooth: triangle index in that chunk's mesh; -1 for blocky and water
};

// Exact raycast against the blocky occupancy: a voxel is filled when IsSolid (or IsWater with
// kStopAtSurface). Walks voxels front to back after Amanatides & Woo, "A Fast Voxel Traversal
// Algorithm for Ray Tracing" (Eurographics 1987). The ray ends at max_distance or the world bounds.
// The walk goes chunk by chunk through the broadphase (RayChunkWalk): chunks whose masks are empty
// are skipped unread, and inside a chunk only voxels whose mask bit is set are read, from the
// chunk snapshot the masks were built from. A chunk that fails to load ends the walk with
// RaycastHit::load_status set, never reads as air.
// Precondition: ValidateRaycast (validate.h) is OK.
RaycastHit RaycastBlocky(const BroadphaseIndex& index, const RaycastInput& ray,
                         const RaycastSettings& settings, QueryStats* stats = nullptr);

// Same walk, but only water voxels (IsWater) stop the ray: the blocky water surface.
// The first water voxel along the ray (the blocky water surface), through the broadphase walk.
RaycastHit RaycastWaterSurface(const BroadphaseIndex& index, const RaycastInput& ray,
                               QueryStats* stats = nullptr);

// Raycast against the smooth marching-cubes surface (see core/mesh/marching_cubes.h): walks the
// mesh chunks along the ray front to back, queries each chunk's kD-tree (built lazily by `cache`)
// with the best distance so far, and stops after the first chunk that holds a hit before its exit.
// The hit carries the smooth unit normal (towards empty space), the triangle's material, chunk and
// triangle index. If the nearest crossing is a back face, or there is none and the origin voxel is
// solid, the origin is inside terrain: started_inside, distance 0.
// Water: kPassThrough ignores it; kStopAtSurface also stops at the blocky water surface (the face
// of the first water voxel, RaycastWaterSurface) when that comes first.
// Precondition: ValidateRaycast (validate.h) is OK.
RaycastHit RaycastSmooth(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                         const RaycastInput& ray, const RaycastSettings& settings,
                         QueryStats* stats = nullptr);

// Every crossing of the smooth surface along the ray, nearest first (front_face tells entries from
// exits); with kStopAtSurface, the list ends with the water surface hit if the
// ray reaches water. `hits` is cleared first.
// On a chunk load error, `hits` holds one RaycastHit whose load_status is that error.
void RaycastSmoothAll(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                      const RaycastInput& ray, const RaycastSettings& settings,
                      std::vector<RaycastHit>* hits, QueryStats* stats = nullptr);

// Dispatches on settings.mode: RaycastSmooth or RaycastBlocky.
RaycastHit Raycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                   const RaycastInput& ray, const RaycastSettings& settings,
                   QueryStats* stats = nullptr);

}  // namespace voxcol
