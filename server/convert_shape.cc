#include "server/convert_shape.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/convert.h"

namespace voxcol::server {

namespace {

// Unset: identity. Set: unit length within 1e-3, then normalized so core sees an exact rotation.
absl::Status RotationFromProto(bool has, const v1::Quat& q, const std::string& field, Quat* out) {
  if (!has) {
    *out = Quat{};
    return absl::OkStatus();
  }
  const float length = std::sqrt(q.w() * q.w() + q.x() * q.x() + q.y() * q.y() + q.z() * q.z());
  if (!std::isfinite(length) || std::fabs(length - 1.0f) > 1e-3f) {
    return absl::InvalidArgumentError(absl::StrCat(
        field,
        " must be a unit quaternion (length within 1e-3 of 1; unset means identity), got length ",
        length));
  }
  *out = Quat{q.w() / length, q.x() / length, q.y() / length, q.z() / length};
  return absl::OkStatus();
}

void HitToProto(const ShapeHit& hit, const Vec3& start, const Vec3& dir, v1::SweepHit* out) {
  out->set_distance(hit.distance);
  ToProto(hit.position, out->mutable_position());
  ToProto(hit.normal, out->mutable_normal());
  out->set_material(hit.material);
  ToProto(hit.chunk, out->mutable_chunk());
  out->set_triangle(hit.triangle);
  ToProto(start + dir * hit.distance, out->mutable_shape_position());
}

void PenetrationToProto(float depth, const Vec3& normal, const Vec3& position,
                        v1::Penetration* out) {
  out->set_depth(depth);
  ToProto(normal, out->mutable_normal());
  ToProto(position, out->mutable_position());
}

}  // namespace

absl::Status FromProto(const v1::PosedShape& in, const std::string& prefix, DecodedShape* out) {
  // The core shape is filled field by field (not with Make*, whose preconditions are asserts):
  // ValidatePosedShape reports bad sizes with the field's name.
  ConvexShape& s = out->shape_;
  s = ConvexShape{};
  out->points_.clear();
  const v1::Shape& shape = in.shape();
  switch (shape.kind_case()) {
    case v1::Shape::kSphere:
      s.type = ShapeType::kSphere;
      s.convex_radius = shape.sphere().radius();
      break;
    case v1::Shape::kCapsule:
      s.type = ShapeType::kCapsule;
      s.convex_radius = shape.capsule().radius();
      s.half_height = shape.capsule().half_height();
      break;
    case v1::Shape::kBox: {
      // Outer half extents on the wire; core keeps the core box inside the rounding.
      const float r = shape.box().convex_radius();
      s.type = ShapeType::kBox;
      s.convex_radius = r;
      s.half_extents = ToCore(shape.box().half_extents()) - Vec3{r, r, r};
      break;
    }
    case v1::Shape::kHull: {
      const auto& points = shape.hull().points();
      out->points_.reserve(size_t(points.size()));
      for (const v1::Vec3& p : points) out->points_.push_back(ToCore(p));
      s.type = ShapeType::kConvexHull;
      s.convex_radius = shape.hull().convex_radius();
      s.points = out->points_.empty() ? nullptr : out->points_.data();
      s.num_points = int(out->points_.size());
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "shape: one of sphere, capsule, box, hull is required"));
  }
  out->pose_.translation = ToCore(in.position());
  return RotationFromProto(in.has_rotation(), in.rotation(), prefix + "rotation",
                           &out->pose_.rotation);
}

absl::Status FromProto(const v1::SweepRequest& request, const ShapeQueryLimits& limits,
                       ShapeSweepInput* input, ShapeSweepSettings* settings) {
  input->direction = ToCore(request.direction());
  if (!IsFinite(input->direction)) {
    return absl::InvalidArgumentError("direction must be finite (no NaN or infinity)");
  }
  // Squared length below ~1e-24 cannot be normalized reliably in float (as for rays).
  if (!(LengthSq(input->direction) > 1e-24f))
    return absl::InvalidArgumentError("direction must be non-zero");
  input->distance = request.distance();
  if (!std::isfinite(input->distance) || input->distance <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("distance must be finite and > 0, got ", input->distance));
  }
  if (input->distance > limits.max_sweep_distance) {
    return absl::InvalidArgumentError(
        absl::StrCat("distance ", input->distance, " exceeds the configured maximum ",
                     limits.max_sweep_distance, " (--max_sweep_distance)"));
  }
  switch (request.collection()) {
    case v1::HIT_COLLECTION_UNSPECIFIED:
    case v1::HIT_COLLECTION_CLOSEST:
      settings->collection = HitCollection::kClosest;
      break;
    case v1::HIT_COLLECTION_ANY:
      settings->collection = HitCollection::kAny;
      break;
    case v1::HIT_COLLECTION_ALL:
      settings->collection = HitCollection::kAll;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("collection: unknown HitCollection value ", int(request.collection())));
  }
  settings->max_hits = limits.max_hits;
  return absl::OkStatus();
}

absl::Status FromProto(const v1::ContactsRequest& request, const ShapeQueryLimits& limits,
                       ContactSettings* settings) {
  const float margin = request.margin();
  if (!std::isfinite(margin) || margin < 0) {
    return absl::InvalidArgumentError(absl::StrCat("margin must be finite and >= 0, got ", margin));
  }
  if (margin > limits.max_extent) {
    return absl::InvalidArgumentError(absl::StrCat("margin ", margin,
                                                   " exceeds the configured maximum ",
                                                   limits.max_extent, " (--max_overlap_extent)"));
  }
  settings->margin = margin;
  settings->water = !request.skip_water();
  return absl::OkStatus();
}

void ToProto(const ShapeSweepResult& result, const ShapeSweepInput& input, v1::SweepResponse* out) {
  out->set_hit(result.hit);
  if (!result.hit) return;
  const Vec3 start = input.shape.pose.translation;
  const Vec3 dir = Normalize(input.direction);
  HitToProto(result.first, start, dir, out->mutable_first());
  for (const ShapeHit& h : result.hits) HitToProto(h, start, dir, out->add_hits());
  out->set_hits_truncated(result.hits_truncated);
  if (result.initial_overlap) {
    out->set_initial_overlap(true);
    PenetrationToProto(result.depth, result.first.normal, result.first.position,
                       out->mutable_mtd());
  }
}

void ToProto(const ContactResult& result, const Vec3& shape_position, bool include_water,
             v1::ContactsResponse* out) {
  for (const ChunkManifold& m : result.manifolds) {
    v1::ChunkContacts* c = out->add_chunks();
    ToProto(m.chunk, c->mutable_chunk());
    for (int i = 0; i < m.count; ++i) {
      const TerrainContact& t = m.points[i];
      v1::ContactPoint* p = c->add_points();
      ToProto(t.position, p->mutable_position());
      ToProto(t.normal, p->mutable_normal());
      p->set_depth(t.depth);
      p->set_material(t.material);
      p->set_triangle(t.triangle);
    }
  }
  if (result.buried) {
    out->set_buried(true);
    // As OverlapPosedShape does for a buried shape: the position is the shape's centre.
    PenetrationToProto(result.buried_depth, result.buried_normal, shape_position,
                       out->mutable_buried_mtd());
  }
  if (include_water) {
    const WaterContact& w = result.water;
    v1::WaterContact* o = out->mutable_water();
    o->set_in_water(w.in_water);
    o->set_submerged_fraction(w.submerged_fraction);
    o->set_submerged_volume(w.submerged_volume);
    o->set_surface_height(w.surface_height);
    if (w.in_water) ToProto(w.center_of_buoyancy, o->mutable_center_of_buoyancy());
  }
}

void ToProto(const ShapeOverlapResult& result, bool include_penetration, v1::OverlapResponse* out) {
  out->set_touches_solid(result.touches_solid);
  out->set_touches_water(result.touches_water);
  ToProto(result.chunks, out);
  if (include_penetration && result.touches_solid) {
    PenetrationToProto(result.depth, result.normal, result.position, out->mutable_penetration());
  }
}

}  // namespace voxcol::server
