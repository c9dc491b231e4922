// MoveCharacters with bodies: the characters of one call collide with the terrain, with each other
// and with the parts of a BodyWorld's bodies at a tick, the same whatever the order of the moves.
//
// Order rule (Gauss-Seidel over the characters): the moves are resolved one by one in ascending id
// order; each sees the characters already moved at their final positions and the others at their
// start positions. Every pair is then swept by the later of the two against the earlier's final
// capsule, so no two final capsules overlap (each sweep stops a skin width short of contact), and
// the result of each character depends on the ids and the inputs only, never on the caller's order.
// A character behind another walking the same way may be held back by the other's start pose for
// one tick: the price of a single pass (no iterations to a fixed point, no per-pair time of
// impact).
//
// Sweeps: an upright capsule against an upright capsule is a ray against their Minkowski
// difference, a capsule of the summed half heights and radii (closed form, RayVsCapsule); against a
// body part (sphere, capsule, box, hull at any rotation) GJK-raycast, conservative by construction
// (van den Bergen 2004). Recovery pushes use closest segment points for capsules and GJK / EPA for
// parts.
#include "core/query/character_crowd.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/bodies/ray_vs_shape.h"
#include "core/geometry/closest_point.h"
#include "core/narrowphase/gjk.h"
#include "core/narrowphase/gjk_raycast.h"
#include "core/narrowphase/penetration.h"

namespace voxcol {
namespace character_internal {
namespace {

// World box of an upright capsule centred at c.
Aabb UprightCapsuleBox(const Vec3& c, float half_height, float radius) {
  const Vec3 e(radius, half_height + radius, radius);
  return {c - e, c + e};
}

// The way out of the Minkowski capsule (half height h along Y, centred at the origin) for a point
// o inside or on it, from its core segment; -dir when o is on the segment (blocks the motion).
Vec3 OutOfCapsule(const Vec3& o, float h, const Vec3& dir) {
  const Vec3 off(o.x, o.y - std::clamp(o.y, -h, h), o.z);
  const float len = Length(off);
  return len > 1e-6f ? off * (1.0f / len) : -dir;
}

}  // namespace

void CharacterCrowd::Build(const std::vector<CharacterMove>& moves, float voxel_size) {
  const int n = int(moves.size());
  moves_ = &moves;
  position_.resize(n);
  region_.resize(n);
  by_min_x_.clear();
  escaped_.clear();
  is_escaped_.assign(n, 0);
  max_width_ = 0;
  for (int i = 0; i < n; ++i) {
    position_[i] = moves[i].position;
    region_[i] = MoveReach(moves[i], voxel_size);
    by_min_x_.push_back({region_[i].min.x, i});
    max_width_ = std::max(max_width_, region_[i].max.x - region_[i].min.x);
  }
  std::sort(by_min_x_.begin(), by_min_x_.end());
  order_.resize(n);
  for (int i = 0; i < n; ++i) order_[i] = i;
  std::sort(order_.begin(), order_.end(), [&](int a, int b) {
    return moves[a].id != moves[b].id ? moves[a].id < moves[b].id : a < b;
  });
}

Aabb CharacterCrowd::CapsuleBox(int i) const {
  const CharacterMove& m = (*moves_)[i];
  return UprightCapsuleBox(position_[i], m.half_height, m.radius);
}

void CharacterCrowd::Moved(int i, const Vec3& position) {
  position_[i] = position;
  if (!is_escaped_[i] && !ContainsBox(region_[i], CapsuleBox(i))) {
    is_escaped_[i] = 1;  // a recovery pushed it beyond its reach: no longer found by its region
    escaped_.push_back(i);
  }
}

void CharacterCrowd::Query(const Aabb& box, int self, std::vector<int>* out) const {
  const size_t first = out->size();
  // Regions overlapping the box start at most max_width_ before it (a millimetre of slack for the
  // rounding of the widths).
  const float from = box.min.x - max_width_ - 1e-3f;
  auto it = std::lower_bound(by_min_x_.begin(), by_min_x_.end(), std::make_pair(from, -1));
  for (; it != by_min_x_.end() && it->first <= box.max.x; ++it) {
    const int j = it->second;
    if (j == self || is_escaped_[j] || !region_[j].Overlaps(box)) continue;
    if (CapsuleBox(j).Overlaps(box)) out->push_back(j);
  }
  for (int j : escaped_) {
    if (j != self && CapsuleBox(j).Overlaps(box)) out->push_back(j);
  }
  const std::vector<CharacterMove>& m = *moves_;
  std::sort(out->begin() + first, out->end(), [&](int a, int b) { return m[a].id < m[b].id; });
}

void CharacterObstacles::Begin(int self, const Aabb& box) {
  self_ = self;
  status_ = absl::OkStatus();
  Gather(box);
}

void CharacterObstacles::Gather(const Aabb& box) {
  gathered_ = box;
  near_.clear();
  capsules_.clear();
  parts_.clear();
  crowd_.Query(box, self_, &near_);
  const std::vector<CharacterMove>& moves = crowd_.moves();
  for (int j : near_) {
    const Vec3& c = crowd_.position(j);
    const CharacterMove& m = moves[j];
    capsules_.push_back(
        {c, m.half_height, m.radius, UprightCapsuleBox(c, m.half_height, m.radius)});
  }
  if (bodies_.world == nullptr) return;
  body_parts_.clear();
  if (absl::Status s = bodies_.world->PartsInBox(box, bodies_.tick, bodies_.filter, &body_parts_);
      !s.ok()) {
    status_ = s;
    return;
  }
  const BodyId own = moves[self_].id;  // a character registered as a body does not block itself
  for (const PosedBodyPart& p : body_parts_) {
    if (p.body_id == own) continue;
    parts_.push_back({PosedShape{p.shape, p.pose}, TransformBox(p.shape->LocalBounds(), p.pose)});
  }
}

void CharacterObstacles::Cover(const Aabb& box) {
  if (!ContainsBox(gathered_, box)) Gather(Union(gathered_, box));
}

bool CharacterObstacles::Cast(const ConvexShape& shape, const Vec3& p, const Vec3& dir,
                              float distance, SweepHit* hit) {
  const float h = shape.half_height, r = shape.convex_radius;
  const Aabb swept = Union(UprightCapsuleBox(p, h, r), UprightCapsuleBox(p + dir * distance, h, r));
  Cover(swept);
  bool found = false;
  float best = distance;
  // Keeps a hit at t with normal n when it is the first or strictly nearer (ties: the first in id
  // order wins, so the answer does not depend on the gather's order).
  auto keep = [&](float t, const Vec3& n) {
    if (found && t >= best) return;
    found = true;
    best = t;
    hit->distance = t;
    hit->normal = n;
    hit->position = p + dir * t - n * r;
    hit->material = 0;
    hit->triangle = -1;
  };
  for (const Capsule& c : capsules_) {
    if (!c.box.Overlaps(swept)) continue;
    const Vec3 o = p - c.centre;  // the ray from o against the capsule A - B
    const float sum_h = h + c.half_height;
    const ShapeRayHit s = RayVsCapsule(o, dir, best, sum_h, r + c.radius);
    if (!s.hit) continue;
    if (s.t > 0) {
      keep(s.t, s.normal);
      continue;
    }
    const Vec3 n = OutOfCapsule(o, sum_h, dir);  // touching at the start: block only going in
    if (Dot(n, dir) < 0) keep(0, n);
  }
  const PosedShape posed{&shape, RigidTransform{Quat(), p}};
  for (const Part& part : parts_) {
    if (!part.box.Overlaps(swept)) continue;
    const CastResult c = GjkRaycast(posed, dir * distance, part.shape);
    if (!c.hit) continue;
    if (!c.initially_overlapping) {
      if (c.fraction * distance <= best) keep(c.fraction * distance, c.normal);
      continue;
    }
    const PenetrationResult pen = ComputePenetration(posed, part.shape);
    const Vec3 n = LengthSq(pen.normal) > 0.5f ? -pen.normal : -dir;
    if (Dot(n, dir) < 0) keep(0, n);
  }
  return found;
}

const std::vector<ObstacleContact>& CharacterObstacles::Contacts(const ConvexShape& shape,
                                                                 const Vec3& p, float margin) {
  contacts_.clear();
  const float h = shape.half_height, r = shape.convex_radius;
  const Aabb box = UprightCapsuleBox(p, h + margin, r + margin);
  Cover(box);
  const Vec3 axis(0, h, 0);
  for (const Capsule& c : capsules_) {
    if (!c.box.Overlaps(box)) continue;
    const Vec3 other(0, c.half_height, 0);
    const SegmentPair s =
        ClosestPointsSegmentSegment(p - axis, p + axis, c.centre - other, c.centre + other);
    const Vec3 d = s.on_first - s.on_second;
    const float len = Length(d);
    const float gap = len - (r + c.radius);
    if (gap >= margin) continue;
    // Coincident cores: any way out is as short; +X keeps it deterministic.
    const Vec3 n = len > 1e-6f ? d * (1.0f / len) : Vec3(1, 0, 0);
    contacts_.push_back({n, -gap, s.on_second + n * c.radius});
  }
  const PosedShape posed{&shape, RigidTransform{Quat(), p}};
  for (const Part& part : parts_) {
    if (!part.box.Overlaps(box)) continue;
    const GjkResult g = GjkDistance(posed, part.shape);
    if (!g.overlapping) {
      if (g.distance < margin) contacts_.push_back({-g.normal, -g.distance, g.point_b});
      continue;
    }
    const PenetrationResult pen = ComputePenetration(posed, part.shape);
    if (LengthSq(pen.normal) > 0.5f) contacts_.push_back({-pen.normal, pen.depth, pen.point_b});
  }
  return contacts_;
}

}  // namespace character_internal

absl::Status ValidateCharacterMoves(const World& world, const std::vector<CharacterMove>& moves,
                                    const QueryLimits& limits, const CharacterBodies& bodies,
                                    const char* id_field) {
  if (bodies.world != nullptr) {
    if (absl::Status s = bodies.world->CheckTick(bodies.tick); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("bodies.", s.message()));
    }
  }
  std::vector<std::pair<BodyId, int>> ids;
  ids.reserve(moves.size());
  for (int i = 0; i < int(moves.size()); ++i) {
    if (absl::Status s = ValidateCharacterMove(world, moves[i], limits); !s.ok()) {
      // The field's path is only built for the error.
      return absl::Status(s.code(), absl::StrCat("moves[", i, "].", s.message()));
    }
    ids.push_back({moves[i].id, i});
  }
  std::sort(ids.begin(), ids.end());
  int repeated = -1, earlier = -1;  // the first move, in the caller's order, repeating an id
  for (size_t k = 1; k < ids.size(); ++k) {
    if (ids[k].first == ids[k - 1].first && (repeated < 0 || ids[k].second < repeated)) {
      repeated = ids[k].second;
      earlier = ids[k - 1].second;
    }
  }
  if (repeated >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("moves[", repeated, "].", id_field, ": character ", moves[repeated].id,
                     " is also moves[", earlier, "]; ids must be unique in a call"));
  }
  return absl::OkStatus();
}

void MoveCharacters(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                    const std::vector<CharacterMove>& moves, const CharacterBodies& bodies,
                    const QueryInterrupt* interrupt, std::vector<CharacterResult>* results,
                    QueryStats* stats) {
  using character_internal::CharacterCrowd;
  using character_internal::CharacterObstacles;
  results->resize(moves.size());
  const float voxel = index.world().voxel_size();
  // Per thread: the broadphase keeps its capacity, so steady-state ticks do not allocate for it.
  thread_local CharacterCrowd crowd;
  crowd.Build(moves, voxel);
  CharacterObstacles obstacles(crowd, bodies);
  for (int i : crowd.order()) {
    obstacles.Begin(i, character_internal::MoveReach(moves[i], voxel));
    CharacterResult& r = (*results)[i];
    character_internal::MoveCharacterAmong(index, cache, moves[i], &obstacles, interrupt, &r,
                                           stats);
    crowd.Moved(i, r.status.ok() ? r.position : moves[i].position);
  }
}

}  // namespace voxcol
