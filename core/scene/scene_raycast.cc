#include "core/scene/scene_raycast.h"

namespace voxcol {

absl::Status SceneRaycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                          const BodyWorld* bodies, const RaycastInput& ray,
                          const RaycastSettings& settings, const SceneFilter& filter,
                          SceneRayHit* out, QueryStats* stats) {
  out->kind = SceneHitKind::kNone;
  out->body_stats = {};
  float reach = ray.max_distance;
  if (filter.terrain) {
    out->terrain = Raycast(index, cache, ray, settings, stats);
    if (!out->terrain.load_status.ok()) return absl::OkStatus();
    if (out->terrain.hit) {
      out->kind = SceneHitKind::kTerrain;
      out->distance = out->terrain.distance;
      reach = out->terrain.distance;
    }
  } else {
    out->terrain = RaycastHit{};
  }
  // Started inside terrain: nothing before it. (The body query needs a positive length.)
  if (!filter.bodies || !(reach > 0)) return absl::OkStatus();
  // The body ray ends at the terrain hit: any body hit found lies before the terrain.
  const BodyRaycastInput body_ray{ray.origin, ray.direction, reach, filter.tick};
  absl::StatusOr<BodyRayHit> body = bodies->Raycast(body_ray, filter.body, &out->body_stats);
  if (!body.ok()) return body.status();
  if (body->hit) {
    out->kind = SceneHitKind::kBody;
    out->distance = body->distance;
    out->body = *body;
  }
  return absl::OkStatus();
}

}  // namespace voxcol
