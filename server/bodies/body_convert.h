// Conversions between the body wire types (body_service.proto) and core/bodies, core/scene.
// Decoding checks everything a field name can be given for (shapes, poses, counts); the registry
// checks the rest (ids, ticks, limits) and names the field too.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/bodies/body_world.h"
#include "core/scene/scene_raycast.h"
#include "voxcol/v1/body_service.pb.h"

namespace voxcol::server {

inline constexpr int kMaxIgnoreIds = 64;

// A batch decoded from the wire; owns the hull points its parts' shapes point into.
struct DecodedBodyBatch {
  BodyBatch batch;
  std::deque<std::vector<Vec3>> hull_points;
};

// INVALID_ARGUMENT naming the field ("create[2].parts[0].shape.capsule.radius",
// "move[1].rotation") for a shape, pose or layer that cannot be a body's.
absl::Status FromProto(const v1::UpdateBodiesRequest& request, DecodedBodyBatch* out);

// Whether a query with this filter reads bodies (set, and its scope is not terrain only).
bool WantsBodies(bool has_filter, const v1::BodyFilter& filter);

// The filter as core's, with the tick resolved against `bodies` (unset: the latest). `ignore`
// holds the ignored ids the result points to. INVALID_ARGUMENT naming `field`.scope or
// .ignore_ids; OUT_OF_RANGE naming `field`.tick outside the body window.
absl::Status FromProto(const v1::BodyFilter& filter, const BodyWorld& bodies,
                       const std::string& field, std::vector<BodyId>* ignore, SceneFilter* out);

// "`field`." before a core error's message (the core names its own fields: "tick: ...").
absl::Status Prefixed(const absl::Status& status, const std::string& field);

}  // namespace voxcol::server
