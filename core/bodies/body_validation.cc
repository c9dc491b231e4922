// Input checks of BodyWorld::Apply: every error names the field, with its index in the batch.
#include <algorithm>
#include <cmath>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/bodies/body_world.h"

namespace voxcol {
namespace {

bool IsFiniteQuat(const Quat& q) {
  return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
}

// The fast check of CheckTransform: finite, unit rotation within 1e-3 in |q|^2.
bool TransformOk(const RigidTransform& t) {
  const Quat& q = t.rotation;
  const float norm_sq = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
  return IsFinite(t.translation) && IsFiniteQuat(q) && std::fabs(norm_sq - 1) <= 1e-3f;
}

absl::Status CheckTransform(const RigidTransform& t, const std::string& field) {
  const Quat& q = t.rotation;
  if (!IsFinite(t.translation) || !IsFiniteQuat(q)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": not finite"));
  }
  const float norm_sq = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
  if (std::fabs(norm_sq - 1) > 1e-3f) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".rotation: not a unit quaternion (|q|^2 = ", norm_sq, ")"));
  }
  return absl::OkStatus();
}

bool Positive(float v) { return std::isfinite(v) && v > 0; }
bool NonNegative(float v) { return std::isfinite(v) && v >= 0; }

absl::Status CheckShape(const ConvexShape& s, const std::string& field) {
  auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
  };
  if (!NonNegative(s.convex_radius)) return bad("convex_radius must be finite and >= 0");
  switch (s.type) {
    case ShapeType::kSphere:
      return Positive(s.convex_radius) ? absl::OkStatus() : bad("sphere radius must be > 0");
    case ShapeType::kCapsule:
      if (!Positive(s.convex_radius)) return bad("capsule radius must be > 0");
      return NonNegative(s.half_height) ? absl::OkStatus()
                                        : bad("capsule half_height must be >= 0");
    case ShapeType::kBox:
      for (int a = 0; a < 3; ++a) {
        if (!NonNegative(s.half_extents[a]) || !(s.half_extents[a] + s.convex_radius > 0))
          return bad("box half extents must be finite and > 0");
      }
      return absl::OkStatus();
    case ShapeType::kConvexHull:
      if (s.points == nullptr || s.num_points < 1 || s.num_points > kMaxHullPoints)
        return bad("a convex hull needs 1 to 64 points");
      for (int i = 0; i < s.num_points; ++i) {
        if (!IsFinite(s.points[i])) return bad("hull points must be finite");
      }
      return absl::OkStatus();
    default:
      return bad("a body part is a sphere, capsule, box or convex hull");
  }
}

}  // namespace

absl::Status BodyWorld::ValidateCreate(const BodyDesc& body, int index) const {
  const std::string field = absl::StrCat("create[", index, "]");
  if (slot_of_.contains(body.id)) {
    return absl::AlreadyExistsError(absl::StrCat(field, ".id: body ", body.id, " already exists"));
  }
  if (body.layer == 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".layer: must be a nonzero bitmask"));
  }
  if (absl::Status s = CheckTransform(body.pose, field + ".pose"); !s.ok()) return s;
  if (body.parts.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".parts: a body needs a part"));
  }
  if (int64_t(body.parts.size()) > limits_.max_parts_per_body) {
    return absl::ResourceExhaustedError(absl::StrCat(field, ".parts: ", body.parts.size(),
                                                     " parts exceed max_parts_per_body ",
                                                     limits_.max_parts_per_body));
  }
  absl::flat_hash_set<uint32_t> part_ids;
  for (size_t j = 0; j < body.parts.size(); ++j) {
    const BodyPartDesc& p = body.parts[j];
    const std::string pf = absl::StrCat(field, ".parts[", j, "]");
    if (!part_ids.insert(p.part_id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(pf, ".part_id: ", p.part_id, " appears twice in the body"));
    }
    if (absl::Status s = CheckShape(p.shape, pf + ".shape"); !s.ok()) return s;
    if (absl::Status s = CheckTransform(p.local, pf + ".local"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool BodyWorld::Resolve(BodyId id, uint32_t* slot) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end() || named_in_[it->second] == validation_) return false;
  named_in_[it->second] = validation_;
  *slot = it->second;
  return true;
}

// Why Resolve failed for `id`.
absl::Status BodyWorld::ResolveError(BodyId id, const std::string& field) const {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return absl::NotFoundError(absl::StrCat(field, ": no body ", id));
  if (named_in_[it->second] == validation_) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": body ", id, " appears more than once in the batch"));
  }
  return absl::InternalError(absl::StrCat(field, ": body ", id, " resolves"));
}

absl::Status BodyWorld::Validate(const BodyBatch& batch) {
  if (has_ticks() && batch.tick <= latest_tick_) {
    return absl::InvalidArgumentError(absl::StrCat("tick: ", batch.tick,
                                                   " is not after the latest body tick ",
                                                   latest_tick_, "; ticks must increase"));
  }
  ++validation_;
  // The hot path of every tick: field names are only formatted for an error.
  move_slots_.resize(batch.move.size());
  for (size_t i = 0; i < batch.move.size(); ++i) {
    if (!Resolve(batch.move[i].id, &move_slots_[i])) {
      return ResolveError(batch.move[i].id, absl::StrCat("move[", i, "].id"));
    }
    if (!TransformOk(batch.move[i].pose)) {
      return CheckTransform(batch.move[i].pose, absl::StrCat("move[", i, "].pose"));
    }
  }
  remove_slots_.resize(batch.remove.size());
  for (size_t i = 0; i < batch.remove.size(); ++i) {
    if (!Resolve(batch.remove[i], &remove_slots_[i])) {
      return ResolveError(batch.remove[i], absl::StrCat("remove[", i, "]"));
    }
  }
  return ValidateCreates(batch);
}

// Creates, and the limits: live bodies, and the reserved history of every slot (a removed body
// keeps its slot until it leaves the window; free slots are reused before new ones are made).
// A created id must not be live, so it cannot also be moved or removed in the batch.
absl::Status BodyWorld::ValidateCreates(const BodyBatch& batch) const {
  if (batch.create.empty()) return absl::OkStatus();
  absl::flat_hash_set<BodyId> seen;
  int64_t new_points = 0, new_parts = 0;
  for (size_t i = 0; i < batch.create.size(); ++i) {
    if (!seen.insert(batch.create[i].id).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "create[", i, "].id: body ", batch.create[i].id, " appears more than once in the batch"));
    }
    if (absl::Status s = ValidateCreate(batch.create[i], int(i)); !s.ok()) return s;
    for (const BodyPartDesc& p : batch.create[i].parts) {
      new_points += p.shape.type == ShapeType::kConvexHull ? p.shape.num_points : 0;
    }
    new_parts += int64_t(batch.create[i].parts.size());
  }
  const int64_t live =
      int64_t(slot_of_.size()) + int64_t(batch.create.size()) - int64_t(batch.remove.size());
  if (live > limits_.max_bodies) {
    return absl::ResourceExhaustedError(
        absl::StrCat("create: ", live, " bodies would exceed max_bodies ", limits_.max_bodies));
  }
  const int64_t new_slots =
      std::max<int64_t>(0, int64_t(batch.create.size()) - int64_t(free_slots_.size()));
  const int64_t bytes = history_bytes() + new_slots * SlotBytes() +
                        new_parts * int64_t(sizeof(Part)) + new_points * int64_t(sizeof(Vec3));
  if (bytes > limits_.max_history_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("create: the body history would take ", bytes,
                                                     " bytes, over max_history_bytes ",
                                                     limits_.max_history_bytes));
  }
  return absl::OkStatus();
}

}  // namespace voxcol
