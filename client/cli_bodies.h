// The voxcol CLI's body pieces (issue 42): update-bodies and list-bodies (BodyService), the body
// filter of raycast (--bodies ...) and the body claim of validate-hit (--target_body ...).
#pragma once

#include <string>

#include "client/voxcol_client.h"

namespace voxcol::client {

// update-bodies: one tick batch from --request (an UpdateBodiesRequest as protobuf JSON, or
// @FILE); prints the tick, the live bodies, the oldest tick kept and the history bytes.
int RunUpdateBodies(Client& client);
// list-bodies: the live bodies at the latest tick (id, owner, layer, parts, position).
int RunListBodies(Client& client);

// raycast / overlap --bodies [--body_scope both|bodies|terrain] [--tick T] [--layer_mask M]
// [--ignore IDS]: fills the request's body_filter; returns "" or a usage error. Nothing without
// --bodies.
std::string BodyFilterFromFlags(v1::RaycastRequest* request);
std::string BodyFilterFromFlags(v1::OverlapRequest* request);
// overlap --bodies: "     body 7 part 1, owner 42, at tick 100" per body part overlapped.
void PrintBodyParts(const v1::OverlapResponse& response);
// validate-hit --target_body ID --part P --tick T [--layer_mask M] [--ignore IDS]; "" or an error.
std::string BodyClaimFromFlags(v1::ValidateHitRequest* request);
// "     body 7 part 1, owner 1007, at tick 100" (a BodyHit's line of raycast and validate-hit).
void PrintBodyHit(const v1::BodyHit& hit);
// "CONFIRMED", "BLOCKED_BY_BODY", ...
const char* VerdictName(v1::HitVerdict verdict);

}  // namespace voxcol::client
