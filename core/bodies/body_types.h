// Inputs and outputs of the body registry (body_world.h): bodies made of convex parts, the tick
// batches that create, move and remove them, the limits, and the query filters and hits.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/geometry/shapes.h"
#include "core/geometry/transform.h"
#include "core/geometry/vec3.h"

namespace voxcol {

using BodyId = uint64_t;

// One convex part of a body (a hitbox: head, torso, a limb). The shape is a sphere, capsule, box or
// convex hull (not a triangle); a hull's points are copied by the registry, so the caller's
// points need only live until Apply returns.
struct BodyPartDesc {
  uint32_t part_id = 0;  // the caller's name for the part, reported by hits; unique in its body
  ConvexShape shape;
  RigidTransform local;  // the part's frame in the body frame
};

struct BodyDesc {
  BodyId id = 0;
  uint64_t owner = 0;   // the caller's, e.g. the player or session it belongs to; not interpreted
  uint32_t layer = 1;   // bitmask matched against query filters' layer_mask; nonzero
  RigidTransform pose;  // body frame in the world frame at the batch's tick
  std::vector<BodyPartDesc> parts;
};

struct BodyMove {
  BodyId id = 0;
  RigidTransform pose;  // new body pose at the batch's tick
};

// Everything that changed at one game tick. Ticks are strictly increasing from batch to batch; a
// body appears at most once in a batch (in one of the three lists). A batch applies all or
// nothing.
struct BodyBatch {
  int64_t tick = 0;
  std::vector<BodyDesc> create;
  std::vector<BodyMove> move;
  std::vector<BodyId> remove;
};

struct BodyLimits {
  int32_t max_bodies = 4096;        // live bodies per world
  int32_t max_parts_per_body = 16;  // parts of one body
  int32_t history_ticks = 60;  // ticks a query may look back, the latest included (1 s at 60 Hz)
  // Memory of the pose history and parts, bytes; the history's worst case (every body moving every
  // tick) is reserved when a body is created, so the bound holds whatever moves later.
  int64_t max_history_bytes = int64_t{64} << 20;
  float fat_margin = 0.1f;  // dynamic tree leaf margin, world units
};

// Which bodies a query sees.
struct BodyFilter {
  uint32_t layer_mask = ~0u;            // a body is seen when (layer & layer_mask) != 0
  absl::Span<const BodyId> ignore_ids;  // bodies never reported (e.g. the shooter); small list
};

// Cost of one query, for benchmarks and stats.
struct BodyQueryStats {
  int64_t nodes_visited = 0;
  int64_t bodies_tested = 0;  // candidate bodies posed at the tick
  int64_t parts_tested = 0;   // exact part tests
};

struct BodyRaycastInput {
  Vec3 origin;
  Vec3 direction;             // unit length
  float max_distance = 1000;  // world units, finite and > 0; pass a terrain hit distance to clip
  int64_t tick = 0;           // the bodies as they were at this tick
};

struct BodyRayHit {
  bool hit = false;
  BodyId body_id = 0;
  uint32_t part_id = 0;
  float distance = 0;  // along the unit direction; 0 when the ray starts inside the part
  Vec3 point;          // world frame
  Vec3 normal;         // unit outward normal of the part at the hit (-direction when inside)
};

// A part posed in the world at a tick (BodyWorld::PartsInBox). `shape` points into the BodyWorld
// and stays valid until its next Apply.
struct PosedBodyPart {
  BodyId body_id = 0;
  uint32_t part_id = 0;
  const ConvexShape* shape = nullptr;
  RigidTransform pose;  // the part's frame in the world frame at the tick
};

struct BodyPartRef {
  BodyId body_id = 0;
  uint32_t part_id = 0;
  bool operator==(const BodyPartRef& o) const {
    return body_id == o.body_id && part_id == o.part_id;
  }
};

}  // namespace voxcol
