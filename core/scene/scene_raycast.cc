#include "core/scene/scene_raycast.h"

namespace voxcol {

absl::StatusOr<SceneRayHit> SceneRaycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                                         const BodyWorld* bodies, const RaycastInput& ray,
                                         const RaycastSettings& settings, const SceneFilter& filter,
                                         QueryStats* stats) {
  SceneRayHit out;
  float reach = ray.max_distance;
  if (filter.terrain) {
    out.terrain = Raycast(index, cache, ray, settings, stats);
    if (!out.terrain.load_status.ok()) return out;
    if (out.terrain.hit) {
      out.kind = SceneHitKind::kTerrain;
      out.distance = out.terrain.distance;
      reach = out.terrain.distance;
    }
  }
  // Started inside terrain: nothing before it. (The body query needs a positive length.)
  if (!filter.bodies || !(reach > 0)) return out;
  // The body ray ends at the terrain hit: any body hit found lies before the terrain.
  const BodyRaycastInput body_ray{ray.origin, ray.direction, reach, filter.tick};
  absl::StatusOr<BodyRayHit> body = bodies->Raycast(body_ray, filter.body, &out.body_stats);
  if (!body.ok()) return body.status();
  if (body->hit) {
    out.kind = SceneHitKind::kBody;
    out.distance = body->distance;
    out.body = *body;
  }
  return out;
}

}  // namespace voxcol
