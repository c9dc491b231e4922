// The body work of the service: UpdateBodies and ListBodies (BodyService), a raycast or overlap
// with a body filter, a ValidateHit on a body and characters as bodies (QueryService), proto in,
// proto out. The geometry is
// core/scene's; this decodes, takes the world's body lock and encodes.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "core/query/character.h"
#include "core/query/raycast.h"
#include "core/query/validate.h"
#include "server/bodies/world_bodies.h"
#include "voxcol/v1/body_service.pb.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// Decodes and applies one tick batch, all or nothing. Errors name the field (body_service.proto).
absl::Status RunUpdateBodies(WorldBodies& bodies, const v1::UpdateBodiesRequest& request,
                             v1::UpdateBodiesResponse* response);
void RunListBodies(const WorldBodies& bodies, v1::ListBodiesResponse* response);

// RaycastRequest with a body filter that reads bodies (WantsBodies). `ray` is validated (unit
// direction). A chunk that failed to load is returned in *load_status (OK otherwise) and the
// response is then meaningless. `bodies` null: FAILED_PRECONDITION.
absl::Status RunSceneRaycast(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                             const WorldBodies* bodies, const RaycastInput& ray,
                             const RaycastSettings& settings, const v1::RaycastRequest& request,
                             v1::RaycastResponse* response, absl::Status* load_status);

// OverlapRequest with a body filter that reads bodies: fills response->bodies with every body
// part `shape` (validated) overlaps at the filter's tick. `bodies` null: FAILED_PRECONDITION.
absl::Status RunBodyOverlap(const WorldBodies* bodies, const PosedShape& shape,
                            const v1::BodyFilter& filter, v1::OverlapResponse* response);

// ValidateHitRequest with target_body: the terrain at the calling thread's version (the caller
// opens read_at), the bodies at target_body.tick, the shot --max_ray_distance long.
absl::Status RunBodyValidateHit(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                                const WorldBodies* bodies, const QueryLimits& limits,
                                const v1::ValidateHitRequest& request,
                                v1::ValidateHitResponse* response, absl::Status* load_status);

// MoveCharactersRequest with a body filter (docs/bodies.md, "Characters as bodies"): the decoded
// `moves` (ids set from client_id, not yet validated) collide with the terrain, with each other
// and, unless the filter's scope is terrain only, with the bodies at its tick. Validates the
// moves (errors name moves[i].<field>, a repeated id moves[i].client_id) and the filter
// (body_filter.<field>); `bodies` null with a filter that reads bodies: FAILED_PRECONDITION.
absl::Status RunCharactersAsBodies(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                                   const WorldBodies* bodies, const QueryLimits& limits,
                                   const v1::BodyFilter& filter,
                                   const std::vector<CharacterMove>& moves,
                                   const QueryInterrupt& interrupt,
                                   std::vector<CharacterResult>* results, QueryStats* stats);

}  // namespace voxcol::server
