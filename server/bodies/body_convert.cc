#include "server/bodies/body_convert.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"

namespace voxcol::server {

namespace {

bool Positive(float v) { return std::isfinite(v) && v > 0; }
bool NonNegative(float v) { return std::isfinite(v) && v >= 0; }
bool Finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

absl::Status Bad(const std::string& field, const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

absl::Status DecodeBox(const v1::BoxShape& box, const std::string& f, ConvexShape* s) {
  const Vec3 half = ToCore(box.half_extents());
  const float r = box.convex_radius();
  if (!Positive(half.x) || !Positive(half.y) || !Positive(half.z)) {
    return Bad(f + ".box.half_extents", "each must be finite and > 0");
  }
  if (!NonNegative(r) || r > std::fmin(half.x, std::fmin(half.y, half.z))) {
    return Bad(f + ".box.convex_radius", "must be >= 0 and at most the smallest half extent");
  }
  s->type = ShapeType::kBox;
  s->convex_radius = r;
  s->half_extents = half - Vec3{r, r, r};  // outer half extents on the wire
  return absl::OkStatus();
}

absl::Status DecodeHull(const v1::ConvexHullShape& hull, const std::string& f,
                        std::vector<Vec3>* points, ConvexShape* s) {
  if (hull.points_size() < 1 || hull.points_size() > kMaxHullPoints) {
    return Bad(f + ".hull.points", "a convex hull needs 1 to 64 points");
  }
  if (!NonNegative(hull.convex_radius())) {
    return Bad(f + ".hull.convex_radius", "must be finite and >= 0");
  }
  for (int i = 0; i < hull.points_size(); ++i) {
    points->push_back(ToCore(hull.points(i)));
    if (!Finite(points->back())) return Bad(absl::StrCat(f, ".hull.points[", i, "]"), "not finite");
  }
  s->type = ShapeType::kConvexHull;
  s->convex_radius = hull.convex_radius();
  s->points = points->data();
  s->num_points = int(points->size());
  return absl::OkStatus();
}

// One part's shape; `points` receives a hull's points (kept alive by the caller).
absl::Status DecodeShape(const v1::Shape& shape, const std::string& f, std::vector<Vec3>* points,
                         ConvexShape* s) {
  *s = ConvexShape{};
  switch (shape.kind_case()) {
    case v1::Shape::kSphere:
      if (!Positive(shape.sphere().radius())) return Bad(f + ".sphere.radius", "must be > 0");
      s->type = ShapeType::kSphere;
      s->convex_radius = shape.sphere().radius();
      return absl::OkStatus();
    case v1::Shape::kCapsule:
      if (!Positive(shape.capsule().radius())) return Bad(f + ".capsule.radius", "must be > 0");
      if (!NonNegative(shape.capsule().half_height())) {
        return Bad(f + ".capsule.half_height", "must be finite and >= 0");
      }
      s->type = ShapeType::kCapsule;
      s->convex_radius = shape.capsule().radius();
      s->half_height = shape.capsule().half_height();
      return absl::OkStatus();
    case v1::Shape::kBox:
      return DecodeBox(shape.box(), f, s);
    case v1::Shape::kHull:
      return DecodeHull(shape.hull(), f, points, s);
    default:
      return Bad(f, "one of sphere, capsule, box, hull is required");
  }
}

// A position and optional rotation (unset: identity; set: unit within 1e-3, then normalized).
absl::Status DecodePose(const v1::Vec3& position, bool has_rotation, const v1::Quat& q,
                        const std::string& f, RigidTransform* out) {
  out->translation = ToCore(position);
  if (!Finite(out->translation)) return Bad(f + "position", "must be finite");
  out->rotation = Quat{};
  if (!has_rotation) return absl::OkStatus();
  const float n2 = q.w() * q.w() + q.x() * q.x() + q.y() * q.y() + q.z() * q.z();
  if (!std::isfinite(n2) || std::fabs(n2 - 1) > 1e-3f) {
    return Bad(f + "rotation", "must be a unit quaternion (length within 1e-3 of 1)");
  }
  const float inv = 1 / std::sqrt(n2);
  out->rotation = Quat{q.w() * inv, q.x() * inv, q.y() * inv, q.z() * inv};
  return absl::OkStatus();
}

absl::Status DecodeCreate(const v1::BodyCreate& in, const std::string& f, DecodedBodyBatch* out,
                          BodyDesc* body) {
  body->id = in.id();
  body->owner = in.owner();
  body->layer = in.layer() == 0 ? 1u : in.layer();
  if (absl::Status s =
          DecodePose(in.position(), in.has_rotation(), in.rotation(), f + ".", &body->pose);
      !s.ok())
    return s;
  body->parts.resize(in.parts_size());
  for (int j = 0; j < in.parts_size(); ++j) {
    const v1::BodyPart& p = in.parts(j);
    const std::string pf = absl::StrCat(f, ".parts[", j, "]");
    BodyPartDesc& part = body->parts[j];
    part.part_id = p.part_id();
    std::vector<Vec3>& points = out->hull_points.emplace_back();
    if (absl::Status s = DecodeShape(p.shape(), pf + ".shape", &points, &part.shape); !s.ok())
      return s;
    if (absl::Status s =
            DecodePose(p.position(), p.has_rotation(), p.rotation(), pf + ".", &part.local);
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FromProto(const v1::UpdateBodiesRequest& request, DecodedBodyBatch* out) {
  BodyBatch& batch = out->batch;
  batch.tick = request.tick();
  batch.create.resize(request.create_size());
  for (int i = 0; i < request.create_size(); ++i) {
    if (absl::Status s =
            DecodeCreate(request.create(i), absl::StrCat("create[", i, "]"), out, &batch.create[i]);
        !s.ok())
      return s;
  }
  batch.move.resize(request.move_size());
  for (int i = 0; i < request.move_size(); ++i) {
    const v1::BodyMove& m = request.move(i);
    batch.move[i].id = m.id();
    if (absl::Status s = DecodePose(m.position(), m.has_rotation(), m.rotation(),
                                    absl::StrCat("move[", i, "]."), &batch.move[i].pose);
        !s.ok())
      return s;
  }
  batch.remove.assign(request.remove().begin(), request.remove().end());
  return absl::OkStatus();
}

bool WantsBodies(bool has_filter, const v1::BodyFilter& filter) {
  return has_filter && filter.scope() != v1::BODY_SCOPE_TERRAIN;
}

absl::Status Prefixed(const absl::Status& status, const std::string& field) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(field, ".", status.message()));
}

absl::Status FromProto(const v1::BodyFilter& filter, const BodyWorld& bodies,
                       const std::string& field, std::vector<BodyId>* ignore, SceneFilter* out) {
  switch (filter.scope()) {
    case v1::BODY_SCOPE_UNSPECIFIED:
    case v1::BODY_SCOPE_TERRAIN_AND_BODIES:
      out->terrain = out->bodies = true;
      break;
    case v1::BODY_SCOPE_BODIES:
      out->terrain = false;
      out->bodies = true;
      break;
    case v1::BODY_SCOPE_TERRAIN:
      out->terrain = true;
      out->bodies = false;
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".scope: unknown BodyScope value ", int(filter.scope())));
  }
  if (filter.ignore_ids_size() > kMaxIgnoreIds) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".ignore_ids: ", filter.ignore_ids_size(),
                                                   " ids, at most ", kMaxIgnoreIds));
  }
  ignore->assign(filter.ignore_ids().begin(), filter.ignore_ids().end());
  out->body = {filter.layer_mask() == 0 ? ~0u : filter.layer_mask(), *ignore};
  out->tick = filter.has_tick() ? filter.tick() : bodies.latest_tick();
  return Prefixed(bodies.CheckTick(out->tick), field);
}

}  // namespace voxcol::server
