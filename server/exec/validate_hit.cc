#include "server/exec/validate_hit.h"

#include "absl/strings/str_cat.h"
#include "core/query/validate_hit.h"
#include "server/bodies/body_ops.h"
#include "server/convert/convert.h"

namespace voxcol::server {

absl::Status RunValidateHit(const QueryEngine& engine, const ServiceLimits& limits,
                            const v1::ValidateHitRequest& request,
                            v1::ValidateHitResponse* response) {
  HitClaim claim;
  claim.origin = ToCore(request.origin());
  claim.direction = ToCore(request.direction());
  switch (request.claim_case()) {
    case v1::ValidateHitRequest::kClaimedHit:
      claim.terrain_hit = true;
      claim.point = ToCore(request.claimed_hit());
      break;
    case v1::ValidateHitRequest::kTargetPoint:
      claim.terrain_hit = false;
      claim.point = ToCore(request.target_point());
      break;
    case v1::ValidateHitRequest::kTargetBody: {
      absl::Status load;
      absl::Status s = RunBodyValidateHit(engine.index, engine.cache, engine.bodies, limits.query,
                                          request, response, &load);
      return load.ok() ? s : load;
    }
    case v1::ValidateHitRequest::CLAIM_NOT_SET:
      return absl::InvalidArgumentError("claim: set claimed_hit, target_point or target_body");
  }
  claim.tolerance = request.tolerance();
  switch (request.mode()) {
    case v1::RAYCAST_MODE_UNSPECIFIED:
    case v1::RAYCAST_MODE_SMOOTH:
      claim.mode = RaycastMode::kSmooth;
      break;
    case v1::RAYCAST_MODE_BLOCKY:
      claim.mode = RaycastMode::kBlocky;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("mode: unknown RaycastMode value ", int(request.mode())));
  }
  if (absl::Status s = ValidateHitClaim(engine.world(), &claim, limits.query); !s.ok()) return s;
  const HitJudgement j = JudgeHit(engine.index, engine.cache, claim);
  if (!j.hit.load_status.ok()) return j.hit.load_status;
  switch (j.verdict) {
    case HitVerdict::kConfirmed:
      response->set_verdict(v1::HIT_VERDICT_CONFIRMED);
      break;
    case HitVerdict::kBlockedByTerrain:
      response->set_verdict(v1::HIT_VERDICT_BLOCKED_BY_TERRAIN);
      break;
    case HitVerdict::kNoTerrainAtClaim:
      response->set_verdict(v1::HIT_VERDICT_NO_TERRAIN_AT_CLAIM);
      break;
  }
  response->set_server_hit(j.hit.hit);
  if (j.hit.hit) ToProto(j.hit, response->mutable_hit());
  response->set_discrepancy(j.discrepancy);
  response->set_claim_distance(j.claim_distance);
  return absl::OkStatus();
}

}  // namespace voxcol::server
