// Lag-compensated hit validation (issue 19): judges a client's claimed shot against the terrain the
// calling thread reads (run it under World::OpenSnapshotAt for the version the client saw).
#pragma once

#include "absl/status/status.h"
#include "core/query/raycast.h"
#include "core/query/validate.h"

namespace voxcol {

enum class HitVerdict { kConfirmed, kBlockedByTerrain, kNoTerrainAtClaim };

struct HitClaim {
  Vec3 origin;     // world units, inside the world
  Vec3 direction;  // non-zero; normalized by ValidateHitClaim
  // true: `point` is where the client says the shot hit the terrain; false: a target the client
  // says the shot reached unobstructed.
  bool terrain_hit = true;
  Vec3 point;
  float tolerance = 0;  // world units, >= 0
  RaycastMode mode = RaycastMode::kSmooth;
};

struct HitJudgement {
  HitVerdict verdict = HitVerdict::kConfirmed;
  RaycastHit hit;            // the server's first hit up to claim_distance (+ tolerance for hits)
  float discrepancy = 0;     // world units (see ValidateHitResponse in query_service.proto)
  float claim_distance = 0;  // world units from origin to the claim's projection on the shot
};

// Origin and direction as ValidateRaycast (fields origin, direction); the claim point finite
// (field claimed_hit / target_point); tolerance finite and >= 0 (field tolerance); the claim's
// distance plus tolerance within limits.max_ray_distance. Normalizes the direction in place.
absl::Status ValidateHitClaim(const World& world, HitClaim* claim, const QueryLimits& limits);

// Precondition: ValidateHitClaim is OK. A chunk that fails to load is returned in
// judgement->hit.load_status (the verdict then means nothing).
HitJudgement JudgeHit(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                      const HitClaim& claim);

}  // namespace voxcol
