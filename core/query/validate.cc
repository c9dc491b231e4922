#include "core/query/validate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace voxcol {

namespace {

std::string Num(float v) { return absl::StrCat(v); }

absl::Status CheckSize(const std::string& field, float v, float max, bool allow_zero) {
  if (!std::isfinite(v)) return absl::InvalidArgumentError(field + " must be finite");
  if (allow_zero ? v < 0 : v <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, allow_zero ? " must be >= 0" : " must be > 0", ", got ", Num(v)));
  }
  if (v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", Num(v), " exceeds the configured maximum extent ", Num(max)));
  }
  return absl::OkStatus();
}

absl::Status CheckCenter(const World& world, const char* field, const Vec3& c) {
  if (!IsFinite(c))
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite (no NaN or infinity)"));
  if (!world.ContainsPoint(c)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " (", c.x, ", ", c.y, ", ", c.z, ") is outside the world bounds"));
  }
  return absl::OkStatus();
}

absl::Status CheckProbeSize(const char* field, float v, float max_extent) {
  if (!std::isfinite(v) || v < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and >= 0, got ", v));
  }
  if (v > max_extent) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", v, " exceeds the configured maximum ", max_extent));
  }
  return absl::OkStatus();
}

// A finite, non-zero direction of any length, scaled to unit length in place. The length is taken
// in double: in float, |d|^2 overflows above ~1.8e19 and underflows below ~1e-19, and the ray would
// silently miss or be refused.
absl::Status NormalizeDirection(Vec3* d) {
  if (!IsFinite(*d)) {
    return absl::InvalidArgumentError("direction must be finite (no NaN or infinity)");
  }
  const double x = d->x, y = d->y, z = d->z;
  const double length = std::sqrt(x * x + y * y + z * z);
  if (!(length > 0)) return absl::InvalidArgumentError("direction must be non-zero");
  *d = Vec3(float(x / length), float(y / length), float(z / length));
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRaycast(const World& world, RaycastInput* input, const QueryLimits& limits) {
  RaycastInput& ray = *input;
  if (!IsFinite(ray.origin))
    return absl::InvalidArgumentError("origin must be finite (no NaN or infinity)");
  if (!world.ContainsPoint(ray.origin)) {
    return absl::InvalidArgumentError(absl::StrCat("origin (", ray.origin.x, ", ", ray.origin.y,
                                                   ", ", ray.origin.z,
                                                   ") is outside the world bounds"));
  }
  if (absl::Status s = NormalizeDirection(&ray.direction); !s.ok()) return s;
  if (!std::isfinite(ray.max_distance) || ray.max_distance <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_distance must be finite and > 0, got ", ray.max_distance));
  }
  if (ray.max_distance > limits.max_ray_distance) {
    return absl::InvalidArgumentError(absl::StrCat("max_distance ", ray.max_distance,
                                                   " exceeds the configured maximum ",
                                                   limits.max_ray_distance));
  }
  return absl::OkStatus();
}

absl::Status ValidateProbe(const World& world, const ProbeShape& shape,
                           const ProbeSettings& settings, const QueryLimits& limits) {
  if (settings.max_voxels > limits.max_probe_voxels) {
    return absl::InvalidArgumentError(absl::StrCat("max_voxels ", settings.max_voxels,
                                                   " exceeds the configured maximum ",
                                                   limits.max_probe_voxels));
  }
  if (shape.is_sphere) {
    if (absl::Status s = CheckCenter(world, "sphere.center", shape.center); !s.ok()) return s;
    return CheckProbeSize("sphere.radius", shape.radius, limits.max_shape_extent);
  }
  if (absl::Status s = CheckCenter(world, "box.center", shape.center); !s.ok()) return s;
  const char* fields[3] = {"box.half_extents.x", "box.half_extents.y", "box.half_extents.z"};
  for (int a = 0; a < 3; ++a) {
    if (absl::Status s = CheckProbeSize(fields[a], shape.half_extents[a], limits.max_shape_extent);
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

namespace {

// 1..kMaxHullPoints finite points within `max` of the origin, a finite radius >= 0, and some
// volume. `kind` is the field path of the shape ("shape.shape.").
absl::Status ValidateHull(const ConvexShape& s, const std::string& kind, float max) {
  if (s.num_points < 1 || s.num_points > kMaxHullPoints || s.points == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(kind, "hull.points must hold 1..",
                                                   kMaxHullPoints, " points, got ", s.num_points));
  }
  for (int i = 0; i < s.num_points; ++i) {
    const Vec3& p = s.points[i];
    if (!IsFinite(p)) {
      return absl::InvalidArgumentError(absl::StrCat(kind, "hull.points[", i, "] must be finite"));
    }
    for (int a = 0; a < 3; ++a) {
      if (std::fabs(p[a]) + std::max(s.convex_radius, 0.0f) > max) {
        return absl::InvalidArgumentError(absl::StrCat(
            kind, "hull.points[", i, "] lies farther than the configured maximum extent ", Num(max),
            " from the shape's origin"));
      }
    }
  }
  if (!std::isfinite(s.convex_radius) || s.convex_radius < 0) {
    return absl::InvalidArgumentError(kind + "hull.convex_radius must be finite and >= 0");
  }
  if (s.num_points < 4 && s.convex_radius == 0) {
    // A point, segment or triangle without rounding has no volume to collide with.
    return absl::InvalidArgumentError(kind +
                                      "hull.points: fewer than 4 points need convex_radius > 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePosedShape(const World& world, PosedShape* shape, const QueryLimits& limits,
                                const std::string& prefix) {
  PosedShape& posed = *shape;
  const ConvexShape& s = *posed.shape;
  const std::string kind = prefix + "shape.";
  const float max = limits.max_shape_extent;
  switch (s.type) {
    case ShapeType::kSphere:
      if (auto st = CheckSize(kind + "sphere.radius", s.convex_radius, max, false); !st.ok())
        return st;
      break;
    case ShapeType::kCapsule:
      if (auto st = CheckSize(kind + "capsule.radius", s.convex_radius, max, false); !st.ok())
        return st;
      if (auto st = CheckSize(kind + "capsule.half_height", s.half_height, max, true); !st.ok())
        return st;
      if (s.half_height + s.convex_radius > max) {
        return absl::InvalidArgumentError(absl::StrCat(
            kind, "capsule.half_height + radius exceeds the configured maximum extent ", Num(max)));
      }
      break;
    case ShapeType::kBox: {
      const Vec3 outer = s.half_extents + Vec3(s.convex_radius, s.convex_radius, s.convex_radius);
      for (int a = 0; a < 3; ++a) {
        if (auto st = CheckSize(kind + "box.half_extents", outer[a], max, false); !st.ok())
          return st;
      }
      if (!std::isfinite(s.convex_radius) || s.convex_radius < 0 ||
          std::min(s.half_extents.x, std::min(s.half_extents.y, s.half_extents.z)) < 0) {
        return absl::InvalidArgumentError(
            kind + "box.convex_radius must be >= 0 and at most the smallest half extent");
      }
      break;
    }
    case ShapeType::kConvexHull:
      if (auto st = ValidateHull(s, kind, max); !st.ok()) return st;
      break;
    case ShapeType::kTriangle:
      return absl::InvalidArgumentError(kind + "kind: triangles are not a query shape");
  }
  if (!IsFinite(posed.pose.translation)) {
    return absl::InvalidArgumentError(prefix + "position must be finite (no NaN or infinity)");
  }
  if (!world.ContainsPoint(posed.pose.translation)) {
    const Vec3& p = posed.pose.translation;
    return absl::InvalidArgumentError(absl::StrCat(prefix, "position (", p.x, ", ", p.y, ", ", p.z,
                                                   ") is outside the world bounds"));
  }
  Quat& q = posed.pose.rotation;
  const float length = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  if (!std::isfinite(length) || std::fabs(length - 1.0f) > 1e-3f) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix,
        "rotation must be a unit quaternion (length within 1e-3 of 1; unset means identity), got "
        "length ",
        Num(length)));
  }
  q = Quat{q.w / length, q.x / length, q.y / length, q.z / length};
  return absl::OkStatus();
}

absl::Status ValidateSweep(const World& world, SweepInput* input, SweepSettings* settings,
                           const QueryLimits& limits) {
  if (absl::Status s = ValidatePosedShape(world, &input->shape, limits, "shape."); !s.ok())
    return s;
  if (absl::Status s = NormalizeDirection(&input->direction); !s.ok()) return s;
  if (!std::isfinite(input->distance) || input->distance <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("distance must be finite and > 0, got ", Num(input->distance)));
  }
  // The motion's squared length must not underflow to 0 (the casts divide by it; found by
  // fuzzing: distance 1e-38).
  if (input->distance * input->distance < std::numeric_limits<float>::min()) {
    return absl::InvalidArgumentError(
        absl::StrCat("distance ", Num(input->distance), " is too small to move (below 1.1e-19)"));
  }
  if (input->distance > limits.max_sweep_distance) {
    return absl::InvalidArgumentError(
        absl::StrCat("distance ", Num(input->distance), " exceeds the configured maximum ",
                     Num(limits.max_sweep_distance), " (--max_sweep_distance)"));
  }
  settings->max_hits = std::min(settings->max_hits, limits.max_sweep_hits);
  return absl::OkStatus();
}

absl::Status ValidateOverlap(const World& world, PosedShape* shape, const QueryLimits& limits) {
  return ValidatePosedShape(world, shape, limits, "shape.");
}

absl::Status ValidateContacts(const World& world, PosedShape* shape,
                              const ContactsSettings& settings, const QueryLimits& limits) {
  if (absl::Status s = ValidatePosedShape(world, shape, limits, "shape."); !s.ok()) return s;
  const float margin = settings.margin;
  if (!std::isfinite(margin) || margin < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("margin must be finite and >= 0, got ", Num(margin)));
  }
  if (margin > limits.max_shape_extent) {
    return absl::InvalidArgumentError(
        absl::StrCat("margin ", Num(margin), " exceeds the configured maximum ",
                     Num(limits.max_shape_extent), " (--max_overlap_extent)"));
  }
  return absl::OkStatus();
}

}  // namespace voxcol
