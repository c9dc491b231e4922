#include "core/query/validate_hit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace voxcol {

namespace {

bool Finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Distance along the (unit) direction from origin to the claim's projection, never negative.
float AlongShot(const HitClaim& claim) {
  const Vec3 d = claim.point - claim.origin;
  return std::max(0.0f,
                  d.x * claim.direction.x + d.y * claim.direction.y + d.z * claim.direction.z);
}

}  // namespace

absl::Status ValidateHitClaim(const World& world, HitClaim* claim, const QueryLimits& limits) {
  const char* point_field = claim->terrain_hit ? "claimed_hit" : "target_point";
  if (!Finite(claim->point)) {
    return absl::InvalidArgumentError(absl::StrCat(point_field, " must be finite"));
  }
  if (!std::isfinite(claim->tolerance) || claim->tolerance < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tolerance must be finite and >= 0, got ", claim->tolerance));
  }
  // Validates origin and direction (normalized in place) with a placeholder distance.
  RaycastInput ray{claim->origin, claim->direction, 1.0f};
  if (absl::Status s = ValidateRaycast(world, &ray, limits); !s.ok()) return s;
  claim->direction = ray.direction;
  const float reach = AlongShot(*claim) + claim->tolerance;
  if (!(reach <= limits.max_ray_distance)) {
    return absl::InvalidArgumentError(absl::StrCat(point_field, ": ", reach,
                                                   " world units along the shot (with tolerance) "
                                                   "exceed the server's --max_ray_distance ",
                                                   limits.max_ray_distance));
  }
  return absl::OkStatus();
}

HitJudgement JudgeHit(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                      const HitClaim& claim) {
  HitJudgement j;
  j.claim_distance = AlongShot(claim);
  // A claimed terrain hit may lie up to `tolerance` beyond where the server finds the surface.
  const float reach = j.claim_distance + (claim.terrain_hit ? claim.tolerance : 0.0f);
  RaycastSettings settings;
  settings.mode = claim.mode;
  settings.water = WaterMode::kPassThrough;
  if (reach > 0) {
    j.hit = Raycast(index, cache, {claim.origin, claim.direction, reach}, settings);
  }
  if (!j.hit.load_status.ok()) return j;
  if (j.hit.hit && j.hit.distance < j.claim_distance - claim.tolerance) {
    j.verdict = HitVerdict::kBlockedByTerrain;
    j.discrepancy = j.claim_distance - j.hit.distance;
    return j;
  }
  if (!claim.terrain_hit) {
    j.verdict = HitVerdict::kConfirmed;
    return j;
  }
  if (j.hit.hit) {
    const Vec3 off = j.hit.position - claim.point;
    j.discrepancy = std::sqrt(off.x * off.x + off.y * off.y + off.z * off.z);
    j.verdict =
        j.discrepancy <= claim.tolerance ? HitVerdict::kConfirmed : HitVerdict::kNoTerrainAtClaim;
    return j;
  }
  j.verdict = HitVerdict::kNoTerrainAtClaim;
  return j;
}

}  // namespace voxcol
