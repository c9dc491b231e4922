// The body registry and its tick history; see body_world.h. Input checks are in
// body_validation.cc, queries in body_queries.cc.
#include "core/bodies/body_world.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace voxcol {

Aabb TransformBox(const Aabb& local, const RigidTransform& pose) {
  const Vec3 c = pose.Apply(local.Center()), e = local.Extent() * 0.5f;
  const Quat& q = pose.rotation;
  // Rows of the rotation matrix; the world half extent along axis i is sum_j |R_ij| e_j.
  const Vec3 r0{1 - 2 * (q.y * q.y + q.z * q.z), 2 * (q.x * q.y - q.w * q.z),
                2 * (q.x * q.z + q.w * q.y)};
  const Vec3 r1{2 * (q.x * q.y + q.w * q.z), 1 - 2 * (q.x * q.x + q.z * q.z),
                2 * (q.y * q.z - q.w * q.x)};
  const Vec3 r2{2 * (q.x * q.z - q.w * q.y), 2 * (q.y * q.z + q.w * q.x),
                1 - 2 * (q.x * q.x + q.y * q.y)};
  auto abs_dot = [&](const Vec3& r) {
    return std::fabs(r.x) * e.x + std::fabs(r.y) * e.y + std::fabs(r.z) * e.z;
  };
  const Vec3 h{abs_dot(r0), abs_dot(r1), abs_dot(r2)};
  return {c - h, c + h};
}

BodyWorld::BodyWorld(const BodyLimits& limits)
    : limits_(limits),
      ring_capacity_(limits.history_ticks),
      shifts_(size_t(std::max(limits.history_ticks, 1))),
      tree_(limits.fat_margin) {
  assert(CheckLimits(limits).ok());
}

absl::Status BodyWorld::CheckLimits(const BodyLimits& limits) {
  auto at_least_one = [](int64_t v, const char* field) {
    return v >= 1 ? absl::OkStatus()
                  : absl::InvalidArgumentError(absl::StrCat(field, ": must be >= 1, got ", v));
  };
  for (absl::Status s : {at_least_one(limits.max_bodies, "max_bodies"),
                         at_least_one(limits.max_parts_per_body, "max_parts_per_body"),
                         at_least_one(limits.history_ticks, "history_ticks"),
                         at_least_one(limits.max_history_bytes, "max_history_bytes")}) {
    if (!s.ok()) return s;
  }
  if (!std::isfinite(limits.fat_margin) || limits.fat_margin < 0) {
    return absl::InvalidArgumentError("fat_margin: must be finite and >= 0");
  }
  return absl::OkStatus();
}

int64_t BodyWorld::oldest_tick() const {
  return std::max(first_tick_, latest_tick_ - (limits_.history_ticks - 1));
}

absl::Status BodyWorld::CheckTick(int64_t tick) const {
  if (!has_ticks()) return absl::OutOfRangeError("tick: no body batch has been applied yet");
  if (tick > latest_tick_) {
    return absl::OutOfRangeError(
        absl::StrCat("tick: ", tick, " is newer than the latest body tick ", latest_tick_));
  }
  if (tick < oldest_tick()) {
    return absl::OutOfRangeError(
        absl::StrCat("tick: ", tick, " is older than the oldest body tick kept, ", oldest_tick(),
                     " (history_ticks ", limits_.history_ticks, ")"));
  }
  return absl::OkStatus();
}

// Worst-case bytes of one slot: its full pose ring and its record.
int64_t BodyWorld::SlotBytes() const {
  return int64_t(ring_capacity_) * int64_t(sizeof(PoseSample)) + int64_t(sizeof(Slot));
}

int64_t BodyWorld::history_bytes() const {
  int64_t parts = 0;
  for (const Slot& s : slots_) parts += int64_t(s.parts.size());
  return int64_t(slots_.size()) * SlotBytes() + parts * int64_t(sizeof(Part)) +
         hull_point_count_ * int64_t(sizeof(Vec3));
}

absl::Status BodyWorld::Apply(const BodyBatch& batch) {
  if (absl::Status s = Validate(batch); !s.ok()) return s;
  if (!has_ticks()) first_tick_ = batch.tick;
  latest_tick_ = batch.tick;
  ExpireRemoved();
  for (uint32_t slot : remove_slots_) Remove(slot, batch.tick);
  for (const BodyDesc& body : batch.create) Create(body, batch.tick);
  float max_shift = 0;
  for (size_t i = 0; i < batch.move.size(); ++i) {
    Move(move_slots_[i], batch.move[i].pose, batch.tick, &max_shift);
  }
  shifts_[size_t(batch.tick % int64_t(shifts_.size()))] = {batch.tick, max_shift};
#ifdef VOXCOL_VALIDATE
  if (!tree_.Validate()) {
    std::fprintf(stderr, "voxcol: body tree failed validation after tick %lld\n",
                 static_cast<long long>(batch.tick));
    std::abort();
  }
#endif
  return absl::OkStatus();
}

void BodyWorld::Create(const BodyDesc& body, int64_t tick) {
  uint32_t index;
  if (!free_slots_.empty()) {
    index = free_slots_.back();
    free_slots_.pop_back();
  } else {
    index = uint32_t(slots_.size());
    slots_.emplace_back();
    samples_.resize(samples_.size() + size_t(ring_capacity_));
    named_in_.push_back(0);
  }
  Slot& s = slots_[index];
  s = Slot{};
  s.id = body.id;
  s.owner = body.owner;
  s.layer = body.layer;
  s.in_use = true;
  s.created_tick = tick;
  // Copy the hulls' points first, then point the parts into the copy (it no longer moves).
  for (const BodyPartDesc& p : body.parts) {
    if (p.shape.type == ShapeType::kConvexHull)
      s.hull_points.insert(s.hull_points.end(), p.shape.points,
                           p.shape.points + p.shape.num_points);
  }
  hull_point_count_ += int64_t(s.hull_points.size());
  size_t next_point = 0;
  for (size_t i = 0; i < body.parts.size(); ++i) {
    const BodyPartDesc& p = body.parts[i];
    Part part{p.part_id, p.shape, p.local};
    if (p.shape.type == ShapeType::kConvexHull) {
      part.shape.points = s.hull_points.data() + next_point;
      next_point += size_t(p.shape.num_points);
    }
    const Aabb b = TransformBox(part.shape.LocalBounds(), part.local);
    s.local_bounds = i == 0 ? b : Union(s.local_bounds, b);
    s.parts.push_back(part);
  }
  s.world_box = TransformBox(s.local_bounds, body.pose);
  s.proxy = tree_.CreateProxy(s.world_box, index);
  PushSample(index, tick, body.pose);
  slot_of_[body.id] = index;
}

void BodyWorld::Move(uint32_t index, const RigidTransform& pose, int64_t tick, float* max_shift) {
  Slot& s = slots_[index];
  const Aabb box = TransformBox(s.local_bounds, pose);
  for (int a = 0; a < 3; ++a) {
    *max_shift = std::max(*max_shift, std::fabs(box.min[a] - s.world_box.min[a]));
    *max_shift = std::max(*max_shift, std::fabs(box.max[a] - s.world_box.max[a]));
  }
  tree_.MoveProxy(s.proxy, box, box.Center() - s.world_box.Center());
  s.world_box = box;
  PushSample(index, tick, pose);
}

// The body leaves the live set now but stays in the tree and its ring until no query of the
// window can see it (ExpireRemoved).
void BodyWorld::Remove(uint32_t index, int64_t tick) {
  Slot& s = slots_[index];
  s.removed_tick = tick;
  slot_of_.erase(s.id);
  removed_.push_back(index);
}

void BodyWorld::ExpireRemoved() {
  const int64_t oldest = oldest_tick();
  while (!removed_.empty() && slots_[removed_.front()].removed_tick <= oldest) {
    Slot& s = slots_[removed_.front()];
    removed_.pop_front();
    tree_.DestroyProxy(s.proxy);
    hull_point_count_ -= int64_t(s.hull_points.size());
    s = Slot{};
    free_slots_.push_back(uint32_t(&s - slots_.data()));
  }
}

// A ring of history_ticks (N) samples per slot, one per tick the body moved. Samples have distinct
// ticks <= latest, so when the ring is full its oldest sample has a tick <= latest - N + 1, the
// oldest tick kept: dropping anything older still leaves every tick of the window its pose.
void BodyWorld::PushSample(uint32_t index, int64_t tick, const RigidTransform& pose) {
  Slot& s = slots_[index];
  PoseSample* ring = samples_.data() + size_t(index) * size_t(ring_capacity_);
  const uint32_t cap = uint32_t(ring_capacity_);
  if (s.ring_count == cap) {
    s.ring_head = (s.ring_head + 1) % cap;
    --s.ring_count;
  }
  ring[(s.ring_head + s.ring_count) % cap] = {tick, pose};
  ++s.ring_count;
  s.last_tick = tick;
  s.last_pose = pose;
}

bool BodyWorld::SlotPoseAt(uint32_t index, int64_t tick, RigidTransform* pose) const {
  const Slot& s = slots_[index];
  if (!s.in_use || tick < s.created_tick || tick >= s.removed_tick) return false;
  if (s.last_tick <= tick) {
    *pose = s.last_pose;
    return true;
  }
  const PoseSample* ring = samples_.data() + size_t(index) * size_t(ring_capacity_);
  const uint32_t cap = uint32_t(ring_capacity_);
  auto at = [&](uint32_t i) -> const PoseSample& { return ring[(s.ring_head + i) % cap]; };
  // Last sample with sample.tick <= tick; the window guarantees the first one qualifies.
  uint32_t lo = 0, hi = s.ring_count - 1;  // at(lo).tick <= tick < at(hi).tick
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (at(mid).tick <= tick ? lo : hi) = mid;
  }
  *pose = at(lo).pose;
  return true;
}

float BodyWorld::ShiftSince(int64_t tick) const {
  float sum = 0;
  for (const TickShift& t : shifts_) {
    if (t.tick > tick && t.tick != kNoTick) sum += t.max_shift;
  }
  return sum;
}

absl::StatusOr<RigidTransform> BodyWorld::PoseAt(BodyId id, int64_t tick) const {
  if (absl::Status s = CheckTick(tick); !s.ok()) return s;
  // Live bodies by id; removed ones still in the window by a scan (rare, not a hot path).
  auto it = slot_of_.find(id);
  RigidTransform pose;
  if (it != slot_of_.end() && SlotPoseAt(it->second, tick, &pose)) return pose;
  for (uint32_t index : removed_) {
    if (slots_[index].id == id && SlotPoseAt(index, tick, &pose)) return pose;
  }
  return absl::NotFoundError(absl::StrCat("id: no body ", id, " at tick ", tick));
}

}  // namespace voxcol
