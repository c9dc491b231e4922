#include "server/bodies/body_ops.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/scene/judge_body_hit.h"
#include "server/bodies/body_convert.h"
#include "server/convert/convert.h"

namespace voxcol::server {

namespace {

absl::Status NoBodies() {
  return absl::FailedPreconditionError("bodies are not served for this world");
}

void BodyHitToProto(const BodyRayHit& hit, int64_t tick,
                    const std::map<BodyId, WorldBodies::Live>& live, v1::BodyHit* out) {
  out->set_body_id(hit.body_id);
  out->set_part_id(hit.part_id);
  out->set_tick(tick);
  // A body removed since the tick asked is no longer listed: its owner is not known.
  if (auto it = live.find(hit.body_id); it != live.end()) out->set_owner(it->second.owner);
}

// The first hit of a scene ray as a RaycastHit (a body hit: distance, position, normal only).
void SceneHitToProto(const SceneRayHit& hit, v1::RaycastHit* out) {
  if (hit.kind == SceneHitKind::kTerrain) {
    ToProto(hit.terrain, out);
    return;
  }
  out->set_distance(hit.body.distance);
  ToProto(hit.body.point, out->mutable_position());
  ToProto(hit.body.normal, out->mutable_normal());
  out->set_front_face(true);
  out->set_triangle(-1);
}

v1::HitKind KindToProto(SceneHitKind kind) {
  switch (kind) {
    case SceneHitKind::kTerrain:
      return v1::HIT_KIND_TERRAIN;
    case SceneHitKind::kBody:
      return v1::HIT_KIND_BODY;
    default:
      return v1::HIT_KIND_UNSPECIFIED;
  }
}

v1::HitVerdict VerdictToProto(BodyHitVerdict v) {
  switch (v) {
    case BodyHitVerdict::kConfirmed:
      return v1::HIT_VERDICT_CONFIRMED;
    case BodyHitVerdict::kBlockedByTerrain:
      return v1::HIT_VERDICT_BLOCKED_BY_TERRAIN;
    case BodyHitVerdict::kBlockedByBody:
      return v1::HIT_VERDICT_BLOCKED_BY_BODY;
    case BodyHitVerdict::kOtherPart:
      return v1::HIT_VERDICT_OTHER_PART;
    default:
      return v1::HIT_VERDICT_NOT_ON_SHOT;
  }
}

// BodyClaim's fields as core's claim (the ray's fields are the caller's).
absl::Status ClaimFromProto(const v1::BodyClaim& in, BodyHitClaim* claim) {
  if (in.ignore_ids_size() > kMaxIgnoreIds) {
    return absl::InvalidArgumentError(absl::StrCat("target_body.ignore_ids: ", in.ignore_ids_size(),
                                                   " ids, at most ", kMaxIgnoreIds));
  }
  claim->body_id = in.body_id();
  claim->part_id = in.part_id();
  claim->tick = in.tick();
  claim->layer_mask = in.layer_mask() == 0 ? ~0u : in.layer_mask();
  claim->ignore_ids.assign(in.ignore_ids().begin(), in.ignore_ids().end());
  return absl::OkStatus();
}

}  // namespace

absl::Status RunUpdateBodies(WorldBodies& bodies, const v1::UpdateBodiesRequest& request,
                             v1::UpdateBodiesResponse* response) {
  DecodedBodyBatch decoded;
  if (absl::Status s = FromProto(request, &decoded); !s.ok()) return s;
  WorldBodies::Applied applied;
  if (absl::Status s = bodies.Apply(decoded.batch, &applied); !s.ok()) return s;
  response->set_tick(applied.tick);
  response->set_oldest_tick(applied.oldest_tick);
  response->set_body_count(applied.bodies);
  response->set_history_bytes(applied.history_bytes);
  return absl::OkStatus();
}

void RunListBodies(const WorldBodies& bodies, v1::ListBodiesResponse* response) {
  bodies.Read([&](const BodyWorld& world, const std::map<BodyId, WorldBodies::Live>& live) {
    response->set_has_ticks(world.has_ticks());
    if (!world.has_ticks()) return;
    response->set_latest_tick(world.latest_tick());
    response->set_oldest_tick(world.oldest_tick());
    response->set_history_bytes(world.history_bytes());
    for (const auto& [id, body] : live) {
      v1::BodySummary* out = response->add_bodies();
      out->set_id(id);
      out->set_owner(body.owner);
      out->set_layer(body.layer);
      out->set_part_count(body.part_count);
      absl::StatusOr<RigidTransform> pose = world.PoseAt(id, world.latest_tick());
      if (!pose.ok()) continue;
      ToProto(pose->translation, out->mutable_position());
      const Quat& q = pose->rotation;
      out->mutable_rotation()->set_w(q.w);
      out->mutable_rotation()->set_x(q.x);
      out->mutable_rotation()->set_y(q.y);
      out->mutable_rotation()->set_z(q.z);
    }
  });
}

absl::Status RunSceneRaycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                             const WorldBodies* bodies, const RaycastInput& ray,
                             const RaycastSettings& settings, const v1::RaycastRequest& request,
                             v1::RaycastResponse* response, absl::Status* load_status) {
  if (bodies == nullptr) return NoBodies();
  if (request.all_hits()) {
    return absl::InvalidArgumentError("all_hits: not available with bodies (body_filter)");
  }
  return bodies->Read([&](const BodyWorld& world, const auto& live) -> absl::Status {
    std::vector<BodyId> ignore;
    SceneFilter filter;
    if (absl::Status s = FromProto(request.body_filter(), world, "body_filter", &ignore, &filter);
        !s.ok())
      return s;
    QueryStats stats;
    SceneRayHit scene;
    if (absl::Status s = SceneRaycast(index, cache, &world, ray, settings, filter, &scene, &stats);
        !s.ok())
      return Prefixed(s, "body_filter");
    const SceneRayHit* hit = &scene;
    *load_status = hit->terrain.load_status;
    if (!load_status->ok()) return absl::OkStatus();
    response->set_first_kind(KindToProto(hit->kind));
    response->set_hit(hit->kind != SceneHitKind::kNone);
    if (hit->kind != SceneHitKind::kNone) SceneHitToProto(*hit, response->mutable_first());
    if (hit->kind == SceneHitKind::kTerrain) {
      response->set_started_inside(hit->terrain.started_inside);
    }
    if (hit->kind == SceneHitKind::kBody) {
      BodyHitToProto(hit->body, filter.tick, live, response->mutable_body());
    }
    if (request.include_stats()) ToProto(stats, response->mutable_stats());
    return absl::OkStatus();
  });
}

absl::Status RunBodyOverlap(const WorldBodies* bodies, const PosedShape& shape,
                            const v1::BodyFilter& filter, v1::OverlapResponse* response) {
  if (bodies == nullptr) return NoBodies();
  return bodies->Read([&](const BodyWorld& world, const auto& live) -> absl::Status {
    std::vector<BodyId> ignore;
    SceneFilter scene;
    if (absl::Status s = FromProto(filter, world, "body_filter", &ignore, &scene); !s.ok())
      return s;
    absl::StatusOr<std::vector<BodyPartRef>> parts = world.Overlap(shape, scene.tick, scene.body);
    if (!parts.ok()) return Prefixed(parts.status(), "body_filter");
    for (const BodyPartRef& part : *parts) {
      BodyRayHit hit;
      hit.body_id = part.body_id;
      hit.part_id = part.part_id;
      BodyHitToProto(hit, scene.tick, live, response->add_bodies());
    }
    return absl::OkStatus();
  });
}

absl::Status RunBodyValidateHit(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                                const WorldBodies* bodies, const QueryLimits& limits,
                                const v1::ValidateHitRequest& request,
                                v1::ValidateHitResponse* response, absl::Status* load_status) {
  if (bodies == nullptr) return NoBodies();
  BodyHitClaim claim;
  if (absl::Status s = ClaimFromProto(request.target_body(), &claim); !s.ok()) return s;
  RaycastInput ray{ToCore(request.origin()), ToCore(request.direction()), limits.max_ray_distance};
  if (absl::Status s = ValidateRaycast(index.world(), &ray, limits); !s.ok()) return s;
  claim.origin = ray.origin;
  claim.direction = ray.direction;
  claim.max_distance = ray.max_distance;
  claim.terrain.mode =
      request.mode() == v1::RAYCAST_MODE_BLOCKY ? RaycastMode::kBlocky : RaycastMode::kSmooth;
  return bodies->Read([&](const BodyWorld& world, const auto& live) -> absl::Status {
    absl::StatusOr<BodyHitJudgement> j = JudgeBodyHit(index, cache, world, claim);
    if (!j.ok()) return Prefixed(j.status(), "target_body");
    *load_status = j->first.terrain.load_status;
    if (!load_status->ok()) return absl::OkStatus();
    response->set_verdict(VerdictToProto(j->verdict));
    response->set_first_kind(KindToProto(j->first.kind));
    response->set_server_hit(j->first.kind != SceneHitKind::kNone);
    if (j->first.kind != SceneHitKind::kNone) SceneHitToProto(j->first, response->mutable_hit());
    if (j->first.kind == SceneHitKind::kBody) {
      BodyHitToProto(j->first.body, claim.tick, live, response->mutable_body());
    }
    response->set_claim_distance(j->target_distance);
    const bool blocked = j->verdict == BodyHitVerdict::kBlockedByTerrain ||
                         j->verdict == BodyHitVerdict::kBlockedByBody;
    if (blocked) response->set_discrepancy(j->target_distance - j->first.distance);
    return absl::OkStatus();
  });
}

absl::Status RunCharactersAsBodies(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                                   const WorldBodies* bodies, const QueryLimits& limits,
                                   const v1::BodyFilter& filter,
                                   const std::vector<CharacterMove>& moves,
                                   const QueryInterrupt& interrupt,
                                   std::vector<CharacterResult>* results, QueryStats* stats) {
  if (filter.scope() == v1::BODY_SCOPE_BODIES) {
    return absl::InvalidArgumentError(
        "body_filter.scope: characters always meet the terrain; BODY_SCOPE_BODIES is for rays "
        "and overlaps (use BODY_SCOPE_TERRAIN_AND_BODIES)");
  }
  auto move = [&](const CharacterBodies& with) {
    // On the wire a character's id is its move's client_id.
    if (absl::Status s = ValidateCharacterMoves(index.world(), moves, limits, with, "client_id");
        !s.ok()) {
      return s;
    }
    MoveCharacters(index, cache, moves, with, &interrupt, results, stats);
    return absl::OkStatus();
  };
  if (!WantsBodies(true, filter)) return move(CharacterBodies{});
  if (bodies == nullptr) return NoBodies();
  return bodies->Read([&](const BodyWorld& world, const auto&) -> absl::Status {
    // Before the first UpdateBodies there are no bodies to meet (unless a tick is asked for).
    if (!world.has_ticks() && !filter.has_tick()) return move(CharacterBodies{});
    std::vector<BodyId> ignore;
    SceneFilter scene;
    if (absl::Status s = FromProto(filter, world, "body_filter", &ignore, &scene); !s.ok()) {
      return s;
    }
    return move(CharacterBodies{&world, scene.tick, scene.body});
  });
}

}  // namespace voxcol::server
