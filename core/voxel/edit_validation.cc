#include "core/voxel/edit_validation.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace voxcol {

namespace {

std::string Fmt(const Vec3& v) { return absl::StrCat("(", v.x, ", ", v.y, ", ", v.z, ")"); }
std::string Fmt(const Int3& v) { return absl::StrCat("(", v.x, ", ", v.y, ", ", v.z, ")"); }

}  // namespace

absl::Status ValidatePointInWorld(const World& world, const Vec3& p, absl::string_view field) {
  if (!IsFinite(p))
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite (no NaN or infinity)"));
  if (!world.ContainsPoint(p)) {
    Aabb b = world.world_bounds();
    return absl::InvalidArgumentError(absl::StrCat(
        field, " ", Fmt(p), " is outside the world bounds ", Fmt(b.min), " .. ", Fmt(b.max)));
  }
  return absl::OkStatus();
}

absl::Status ValidateLength(float value, float max, absl::string_view field) {
  if (!std::isfinite(value) || value <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite and > 0, got ", value));
  }
  if (value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", value, " exceeds the configured maximum ", max));
  }
  return absl::OkStatus();
}

absl::Status ValidateSize(const Vec3& size, float max, absl::string_view field) {
  const char* axes[3] = {".x", ".y", ".z"};
  for (int i = 0; i < 3; ++i) {
    absl::Status s = ValidateLength(size[i], max, absl::StrCat(field, axes[i]));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ValidateRotation(const Quat& q, absl::string_view field) {
  float norm_sq = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
  if (!std::isfinite(norm_sq)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite (no NaN or infinity)"));
  }
  // |q|^2 within 2e-3 of 1 is |q| within 1e-3: float round-off from Euler angles passes, a typo
  // does not.
  if (std::fabs(norm_sq - 1.0f) > 2e-3f) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " must be a unit quaternion (w, x, y, z), got length ", std::sqrt(norm_sq)));
  }
  return absl::OkStatus();
}

absl::Status ValidateRegion(const World& world, const IntBox& region, const EditLimits& limits,
                            absl::string_view field) {
  if (region.Empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " ", Fmt(region.min), " .. ", Fmt(region.max), " is empty (max is exclusive)"));
  }
  if (!world.voxel_bounds().ContainsBox(region)) {
    IntBox b = world.voxel_bounds();
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", Fmt(region.min), " .. ", Fmt(region.max),
                     " is not inside the world voxels ", Fmt(b.min), " .. ", Fmt(b.max)));
  }
  if (region.Volume() > limits.max_region_voxels) {
    return absl::InvalidArgumentError(absl::StrCat(field, " spans ", region.Volume(),
                                                   " voxels, more than the configured maximum ",
                                                   limits.max_region_voxels));
  }
  return absl::OkStatus();
}

Quat NormalizedRotation(const Quat& q) {
  float inv = 1.0f / std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  return {q.w * inv, q.x * inv, q.y * inv, q.z * inv};
}

}  // namespace voxcol
