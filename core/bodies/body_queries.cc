// Queries against the bodies at a tick: BodyWorld::Raycast and BodyWorld::Overlap.
//
// Past ticks use the one tree of the latest fat boxes: a body's box at tick T lies within its
// latest box grown on every side by how far its box has moved since T, and ShiftSince(T) bounds
// that for every body (the sum, over the ticks after T, of the largest shift of any box in that
// tick). The walk grows every node box by that bound; each candidate is then posed at T and its
// exact box at T tested before its parts. docs/bodies.md has the alternatives and the numbers.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/bodies/body_world.h"
#include "core/bodies/ray_vs_shape.h"
#include "core/narrowphase/gjk.h"

namespace voxcol {
namespace {

absl::Status CheckRay(const BodyRaycastInput& in) {
  if (!IsFinite(in.origin)) return absl::InvalidArgumentError("origin: not finite");
  if (!IsFinite(in.direction) || std::fabs(LengthSq(in.direction) - 1) > 1e-3f) {
    return absl::InvalidArgumentError("direction: must be a finite unit vector");
  }
  if (!std::isfinite(in.max_distance) || !(in.max_distance > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_distance: must be finite and > 0, got ", in.max_distance));
  }
  return absl::OkStatus();
}

}  // namespace

bool BodyWorld::Passes(const Slot& s, const BodyFilter& filter) const {
  if ((s.layer & filter.layer_mask) == 0) return false;
  return std::find(filter.ignore_ids.begin(), filter.ignore_ids.end(), s.id) ==
         filter.ignore_ids.end();
}

absl::StatusOr<BodyRayHit> BodyWorld::Raycast(const BodyRaycastInput& in, const BodyFilter& filter,
                                              BodyQueryStats* stats) const {
  if (absl::Status s = CheckTick(in.tick); !s.ok()) return s;
  if (absl::Status s = CheckRay(in); !s.ok()) return s;
  const float inflate = in.tick == latest_tick_ ? 0 : ShiftSince(in.tick);
  const Vec3 inv = SlabInverse(in.direction);
  BodyRayHit best;
  BodyQueryStats local;
  auto visit = [&](uint32_t index, float max_t) {
    const Slot& s = slots_[index];
    RigidTransform pose;
    if (!Passes(s, filter) || !SlotPoseAt(index, in.tick, &pose)) return max_t;
    ++local.bodies_tested;
    // The body's tight box at the tick (the tree holds fat, possibly grown, boxes) culls before
    // the part tests; at the latest tick it is the slot's.
    const Aabb box = in.tick == latest_tick_ ? s.world_box : TransformBox(s.local_bounds, pose);
    if (SlabEnter(in.origin, inv, box.min, box.max, max_t) < 0) return max_t;
    for (const Part& part : s.parts) {
      ++local.parts_tested;
      const ShapeRayHit h =
          RayVsShape(in.origin, in.direction, max_t, part.shape, pose * part.local);
      if (!h.hit || (best.hit && h.t >= best.distance)) continue;
      best = {true, s.id, part.part_id, h.t, in.origin + in.direction * h.t, h.normal};
      max_t = h.t;
    }
    return max_t;
  };
  DynamicTreeStats tree_stats;
  tree_.RayCast(in.origin, in.direction, in.max_distance, inflate, visit, &tree_stats);
  if (stats) {
    stats->nodes_visited += tree_stats.nodes_visited;
    stats->bodies_tested += local.bodies_tested;
    stats->parts_tested += local.parts_tested;
  }
  return best;
}

absl::StatusOr<std::vector<BodyPartRef>> BodyWorld::Overlap(const PosedShape& shape, int64_t tick,
                                                            const BodyFilter& filter,
                                                            BodyQueryStats* stats) const {
  if (absl::Status s = CheckTick(tick); !s.ok()) return s;
  if (shape.shape == nullptr) return absl::InvalidArgumentError("shape: missing");
  // The candidates near the shape's box, posed at the tick and in (body, part) order, then GJK.
  thread_local std::vector<PosedBodyPart> near;
  near.clear();
  BodyQueryStats local;
  const Aabb box = TransformBox(shape.shape->LocalBounds(), shape.pose);
  if (absl::Status s = PartsInBox(box, tick, filter, &near, &local); !s.ok()) return s;
  std::vector<BodyPartRef> out;
  for (const PosedBodyPart& part : near) {
    ++local.parts_tested;
    if (GjkIntersect(shape, {part.shape, part.pose})) out.push_back({part.body_id, part.part_id});
  }
  if (stats) {
    stats->nodes_visited += local.nodes_visited;
    stats->bodies_tested += local.bodies_tested;
    stats->parts_tested += local.parts_tested;
  }
  return out;
}

absl::Status BodyWorld::PartsInBox(const Aabb& box, int64_t tick, const BodyFilter& filter,
                                   std::vector<PosedBodyPart>* out, BodyQueryStats* stats) const {
  if (absl::Status s = CheckTick(tick); !s.ok()) return s;
  const float inflate = tick == latest_tick_ ? 0 : ShiftSince(tick);
  const size_t first = out->size();
  BodyQueryStats local;
  auto visit = [&](uint32_t index) {
    const Slot& s = slots_[index];
    RigidTransform pose;
    if (!Passes(s, filter) || !SlotPoseAt(index, tick, &pose)) return;
    ++local.bodies_tested;
    const Aabb body_box = tick == latest_tick_ ? s.world_box : TransformBox(s.local_bounds, pose);
    if (!body_box.Overlaps(box)) return;
    for (const Part& part : s.parts)
      out->push_back({s.id, part.part_id, &part.shape, pose * part.local});
  };
  DynamicTreeStats tree_stats;
  tree_.Query(box, inflate, visit, &tree_stats);
  // The walk's order follows the tree's shape; callers that pick the first of equal answers need
  // one independent of it.
  std::sort(out->begin() + first, out->end(), [](const PosedBodyPart& a, const PosedBodyPart& b) {
    return a.body_id != b.body_id ? a.body_id < b.body_id : a.part_id < b.part_id;
  });
  if (stats) {
    stats->nodes_visited += tree_stats.nodes_visited;
    stats->bodies_tested += local.bodies_tested;
  }
  return absl::OkStatus();
}

}  // namespace voxcol
