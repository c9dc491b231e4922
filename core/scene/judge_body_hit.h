// Lag-compensated judgement of a shot claimed to hit a body part (issue 42): the terrain at the
// version the calling thread reads (run it under World::OpenSnapshotAt for the shooter's version)
// and the bodies at the shooter's tick, both rewound, one ray through them.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/scene/scene_raycast.h"

namespace voxcol {

enum class BodyHitVerdict {
  kConfirmed,         // the claimed part is the first thing the shot meets
  kBlockedByTerrain,  // the terrain comes first; the target body is further along the shot
  kBlockedByBody,     // another body comes first; the target body is further along the shot
  kOtherPart,         // the target body comes first, but another of its parts
  kNotOnShot,         // the target body is not on the shot (within max_distance)
};

struct BodyHitClaim {
  Vec3 origin;
  Vec3 direction;          // unit length
  float max_distance = 0;  // world units, > 0: how far the shot reaches
  BodyId body_id = 0;
  uint32_t part_id = 0;
  int64_t tick = 0;  // the bodies as the shooter saw them
  uint32_t layer_mask = ~0u;
  std::vector<BodyId> ignore_ids;  // never block or count (the shooter)
  RaycastSettings terrain;         // surface the terrain is tested against
};

struct BodyHitJudgement {
  BodyHitVerdict verdict = BodyHitVerdict::kNotOnShot;
  SceneRayHit first;          // the first thing the shot meets (kind kNone: nothing)
  float target_distance = 0;  // along the shot to the target body (not kNotOnShot)
};

// At most this many other bodies are looked through when searching the target behind a blocker;
// a target behind more of them is reported as kNotOnShot.
inline constexpr int kMaxBodiesLookedThrough = 16;

// Judges `claim`. Preconditions: ValidateRaycast is OK for (origin, direction, max_distance).
// Errors: OUT_OF_RANGE for a tick outside the body window, NOT_FOUND when the target body did not
// exist at the tick (field `body_id`). A chunk that fails to load is returned in
// first.terrain.load_status (the verdict then means nothing).
absl::StatusOr<BodyHitJudgement> JudgeBodyHit(const BroadphaseIndex& index,
                                              ChunkCollisionCache& cache, const BodyWorld& bodies,
                                              const BodyHitClaim& claim);

}  // namespace voxcol
