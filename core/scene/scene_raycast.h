// A ray against the terrain and the bodies of one world together (issue 42): "what does this shot
// meet first", with the terrain at the version the calling thread reads and the bodies at a tick.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/bodies/body_world.h"
#include "core/query/raycast.h"

namespace voxcol {

// What a scene query sees.
struct SceneFilter {
  bool terrain = true;
  bool bodies = false;
  BodyFilter body;   // which bodies (layer mask, ignored ids); read only with `bodies`
  int64_t tick = 0;  // the bodies as they were at this tick; read only with `bodies`
};

enum class SceneHitKind { kNone, kTerrain, kBody };

struct SceneRayHit {
  SceneHitKind kind = SceneHitKind::kNone;
  float distance = 0;  // world units along the unit direction (kind != kNone)
  // The terrain's answer whenever the terrain was read (its load_status always; a terrain hit
  // beyond a body hit is kept here too, with kind kBody).
  RaycastHit terrain;
  BodyRayHit body;  // kind kBody: the body part met
  BodyQueryStats body_stats;
};

// The first thing `ray` meets among the terrain and the bodies `filter` sees. The terrain is cast
// first; the body ray is then clipped at the terrain hit (a body behind a wall is never reported,
// and the body walk stops where the terrain does), so a body hit, when there is one, is the
// answer. A ray that starts inside terrain stops there (distance 0, no body test).
// The answer is written to `hit` (overwritten; an out parameter, so that a caller casting many
// rays reuses one).
// Preconditions: ValidateRaycast (core/query/validate.h) is OK for `ray` (unit direction); with
// filter.bodies, `bodies` is non-null. Errors: the body query's (OUT_OF_RANGE for a tick outside
// its window). A chunk that fails to load is returned in hit->terrain.load_status (kind kNone).
absl::Status SceneRaycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                          const BodyWorld* bodies, const RaycastInput& ray,
                          const RaycastSettings& settings, const SceneFilter& filter,
                          SceneRayHit* hit, QueryStats* stats = nullptr);

}  // namespace voxcol
