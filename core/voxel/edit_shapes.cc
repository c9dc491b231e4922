#include "core/voxel/edit_shapes.h"

#include <algorithm>
#include <cmath>

#include "core/voxel/edit_validation.h"

namespace voxcol {

namespace {

// World-space bounds of a local box of half extents `half` rotated by `r` around `center`: each
// world axis gets the sum of the rotated half axes' absolute components.
Aabb OrientedBounds(const Vec3& center, const Quat& r, const Vec3& half) {
  Vec3 axes[3] = {r.Rotate({half.x, 0, 0}), r.Rotate({0, half.y, 0}), r.Rotate({0, 0, half.z})};
  Vec3 extent;
  for (int i = 0; i < 3; ++i)
    extent[i] = std::fabs(axes[0][i]) + std::fabs(axes[1][i]) + std::fabs(axes[2][i]);
  return {center - extent, center + extent};
}

// Applies a shape given by a local-frame SDF at `center` rotated by `rotation`.
template <typename LocalSdf>
void ApplyOrientedShape(ChunkEdit& edit, const Vec3& center, const Quat& rotation, const Vec3& half,
                        const LocalSdf& local_sdf, uint8_t material, EditMode mode) {
  Quat r = NormalizedRotation(rotation);
  Quat inverse = r.Conjugate();
  // Rotation preserves distances, so the local SDF's guarantees carry over to world space.
  auto sdf = [&](const Vec3& p) { return local_sdf(inverse.Rotate(p - center)); };
  ApplyShape(edit, OrientedBounds(center, r, half), sdf, material, mode);
}

// Rewrites every voxel of `region` as f(voxel), chunk by chunk.
template <typename F>
void MapRegion(ChunkEdit& edit, const IntBox& region, const F& f) {
  ForEachChunkIn(region, [&](const ChunkKey& key, const IntBox& part) {
    Chunk* chunk = edit.Mutable(key);
    for (int32_t y = part.min.y; y < part.max.y; ++y)
      for (int32_t z = part.min.z; z < part.max.z; ++z)
        for (int32_t x = part.min.x; x < part.max.x; ++x) {
          Voxel& v = chunk->At(LocalOf({x, y, z}));
          v = Canonical(f(v));
        }
  });
}

absl::Status ValidateOriented(const World& world, const Vec3& center, const Quat& rotation) {
  absl::Status status = ValidatePointInWorld(world, center, "center");
  if (status.ok()) status = ValidateRotation(rotation, "rotation");
  return status;
}

}  // namespace

float BlockSdf(const Vec3& p, const Vec3& size) {
  Vec3 q(std::fabs(p.x) - 0.5f * size.x, std::fabs(p.y) - 0.5f * size.y,
         std::fabs(p.z) - 0.5f * size.z);
  float outside = Length(Max(q, Vec3()));
  float inside = std::min(std::max(q.x, std::max(q.y, q.z)), 0.0f);
  return outside + inside;
}

float CylinderSdf(const Vec3& p, float height, float radius) {
  float radial = std::sqrt(p.x * p.x + p.z * p.z) - radius;
  float axial = std::fabs(p.y) - 0.5f * height;
  float outside = std::hypot(std::max(radial, 0.0f), std::max(axial, 0.0f));
  return outside + std::min(std::max(radial, axial), 0.0f);
}

float WedgeSdf(const Vec3& p, const Vec3& size) {
  // The slope plane sz*y - sy*z = 0 passes through the centre and both cut edges.
  float slope = (size.z * p.y - size.y * p.z) / std::hypot(size.y, size.z);
  float sides = std::fabs(p.x) - 0.5f * size.x;
  float bottom = -p.y - 0.5f * size.y;
  float back = p.z - 0.5f * size.z;
  return std::max(std::max(slope, sides), std::max(bottom, back));
}

absl::Status ValidateFillBlock(const World& world, const FillBlockParams& p,
                               const EditLimits& limits) {
  absl::Status status = ValidateOriented(world, p.center, p.rotation);
  if (status.ok()) status = ValidateSize(p.size, limits.max_extent, "size");
  return status;
}

absl::Status ValidateFillCylinder(const World& world, const FillCylinderParams& p,
                                  const EditLimits& limits) {
  absl::Status status = ValidateOriented(world, p.center, p.rotation);
  if (status.ok()) status = ValidateLength(p.height, limits.max_extent, "height");
  if (status.ok()) status = ValidateLength(p.radius, limits.max_radius, "radius");
  return status;
}

absl::Status ValidateFillWedge(const World& world, const FillWedgeParams& p,
                               const EditLimits& limits) {
  absl::Status status = ValidateOriented(world, p.center, p.rotation);
  if (status.ok()) status = ValidateSize(p.size, limits.max_extent, "size");
  return status;
}

absl::Status ValidateFillRegion(const World& world, const FillRegionParams& p,
                                const EditLimits& limits) {
  return ValidateRegion(world, p.region, limits, "region");
}

absl::Status ValidateReplaceMaterial(const World& world, const ReplaceMaterialParams& p,
                                     const EditLimits& limits) {
  return ValidateRegion(world, p.region, limits, "region");
}

absl::Status ValidateClear(const World& world, const ClearParams& p, const EditLimits& limits) {
  return ValidateRegion(world, p.region, limits, "region");
}

absl::Status FillBlock(ChunkEdit& edit, const FillBlockParams& p, const EditLimits& limits) {
  absl::Status status = ValidateFillBlock(edit.world(), p, limits);
  if (!status.ok()) return status;
  auto sdf = [&](const Vec3& local) { return BlockSdf(local, p.size); };
  ApplyOrientedShape(edit, p.center, p.rotation, p.size * 0.5f, sdf, p.material, p.mode);
  return absl::OkStatus();
}

absl::Status FillCylinder(ChunkEdit& edit, const FillCylinderParams& p, const EditLimits& limits) {
  absl::Status status = ValidateFillCylinder(edit.world(), p, limits);
  if (!status.ok()) return status;
  auto sdf = [&](const Vec3& local) { return CylinderSdf(local, p.height, p.radius); };
  Vec3 half(p.radius, 0.5f * p.height, p.radius);
  ApplyOrientedShape(edit, p.center, p.rotation, half, sdf, p.material, p.mode);
  return absl::OkStatus();
}

absl::Status FillWedge(ChunkEdit& edit, const FillWedgeParams& p, const EditLimits& limits) {
  absl::Status status = ValidateFillWedge(edit.world(), p, limits);
  if (!status.ok()) return status;
  auto sdf = [&](const Vec3& local) { return WedgeSdf(local, p.size); };
  ApplyOrientedShape(edit, p.center, p.rotation, p.size * 0.5f, sdf, p.material, p.mode);
  return absl::OkStatus();
}

absl::Status FillRegion(ChunkEdit& edit, const FillRegionParams& p, const EditLimits& limits) {
  absl::Status status = ValidateFillRegion(edit.world(), p, limits);
  if (!status.ok()) return status;
  MapRegion(edit, p.region, [&](Voxel v) { return CombineCoverage(v, 1.0f, p.material, p.mode); });
  return absl::OkStatus();
}

absl::Status ReplaceMaterial(ChunkEdit& edit, const ReplaceMaterialParams& p,
                             const EditLimits& limits) {
  absl::Status status = ValidateReplaceMaterial(edit.world(), p, limits);
  if (!status.ok()) return status;
  MapRegion(edit, p.region, [&](Voxel v) {
    if (v.material != p.source) return v;
    // Air has occupancy 0 in canonical form; replacing it with a material means filling it.
    return Voxel{p.target, p.source == kMaterialAir ? uint8_t(255) : v.occupancy};
  });
  return absl::OkStatus();
}

absl::Status Clear(ChunkEdit& edit, const ClearParams& p, const EditLimits& limits) {
  absl::Status status = ValidateClear(edit.world(), p, limits);
  if (!status.ok()) return status;
  MapRegion(edit, p.region, [](Voxel) { return Voxel{}; });
  return absl::OkStatus();
}

}  // namespace voxcol
