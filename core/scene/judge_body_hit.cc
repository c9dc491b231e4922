#include "core/scene/judge_body_hit.h"

#include "absl/strings/str_cat.h"

namespace voxcol {

namespace {

// Distance along the shot to the first part of the target body, looking through the other bodies
// (terrain ignored); false when the target is not on the shot.
bool FindTarget(const BodyWorld& bodies, const BodyHitClaim& claim, float* distance) {
  std::vector<BodyId> ignore = claim.ignore_ids;
  const BodyRaycastInput ray{claim.origin, claim.direction, claim.max_distance, claim.tick};
  for (int looked = 0; looked <= kMaxBodiesLookedThrough; ++looked) {
    absl::StatusOr<BodyRayHit> hit = bodies.Raycast(ray, {claim.layer_mask, ignore});
    if (!hit.ok() || !hit->hit) return false;
    if (hit->body_id == claim.body_id) {
      *distance = hit->distance;
      return true;
    }
    ignore.push_back(hit->body_id);
  }
  return false;
}

}  // namespace

absl::StatusOr<BodyHitJudgement> JudgeBodyHit(const BroadphaseIndex& index,
                                              ChunkCollisionCache& cache, const BodyWorld& bodies,
                                              const BodyHitClaim& claim) {
  if (absl::Status s = bodies.CheckTick(claim.tick); !s.ok()) return s;
  if (!bodies.PoseAt(claim.body_id, claim.tick).ok()) {
    return absl::NotFoundError(
        absl::StrCat("body_id: no body ", claim.body_id, " at tick ", claim.tick));
  }
  // 1. The first thing the shot meets: terrain at this thread's version, bodies at the tick.
  SceneFilter filter;
  filter.bodies = true;
  filter.body = {claim.layer_mask, claim.ignore_ids};
  filter.tick = claim.tick;
  const RaycastInput ray{claim.origin, claim.direction, claim.max_distance};
  BodyHitJudgement j;
  if (absl::Status s = SceneRaycast(index, cache, &bodies, ray, claim.terrain, filter, &j.first);
      !s.ok())
    return s;
  if (!j.first.terrain.load_status.ok()) return j;
  // 2. The target itself first: the claimed part or another of the body's parts.
  if (j.first.kind == SceneHitKind::kBody && j.first.body.body_id == claim.body_id) {
    j.target_distance = j.first.distance;
    j.verdict = j.first.body.part_id == claim.part_id ? BodyHitVerdict::kConfirmed
                                                      : BodyHitVerdict::kOtherPart;
    return j;
  }
  // 3. Something else (or nothing) first: blocked only if the target is further along the shot.
  if (j.first.kind == SceneHitKind::kNone || !FindTarget(bodies, claim, &j.target_distance)) {
    j.verdict = BodyHitVerdict::kNotOnShot;
    j.target_distance = 0;
    return j;
  }
  j.verdict = j.first.kind == SceneHitKind::kTerrain ? BodyHitVerdict::kBlockedByTerrain
                                                     : BodyHitVerdict::kBlockedByBody;
  return j;
}

}  // namespace voxcol
