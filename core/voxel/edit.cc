#include "core/voxel/edit.h"

#include "core/voxel/edit_validation.h"

namespace voxcol {

namespace {

uint8_t ToOccupancy(float fraction) {
  return uint8_t(std::lround(std::clamp(fraction, 0.0f, 1.0f) * 255.0f));
}

}  // namespace

Voxel CombineCoverage(Voxel current, float coverage, uint8_t material, EditMode mode) {
  uint8_t c = ToOccupancy(coverage);
  if (mode == EditMode::kAdd && material == kMaterialAir) mode = EditMode::kSubtract;
  switch (mode) {
    case EditMode::kAdd:
      if (c >= current.occupancy || current.material == kMaterialAir)
        return Canonical({material, c});
      return current;
    case EditMode::kSubtract: {
      uint8_t left = std::min<uint8_t>(current.occupancy, 255 - c);
      return Canonical({current.material, left});
    }
    case EditMode::kSet:
      if (c == 0) return current;
      return Canonical({material, c});
  }
  return current;
}

absl::Status ValidateFillBall(const World& world, const FillBallParams& p,
                              const EditLimits& limits) {
  absl::Status status = ValidatePointInWorld(world, p.center, "center");
  if (status.ok()) status = ValidateLength(p.radius, limits.max_radius, "radius");
  return status;
}

absl::Status FillBall(ChunkEdit& edit, const FillBallParams& p, const EditLimits& limits) {
  absl::Status status = ValidateFillBall(edit.world(), p, limits);
  if (!status.ok()) return status;
  Vec3 r(p.radius, p.radius, p.radius);
  auto sdf = [&](const Vec3& q) { return Length(q - p.center) - p.radius; };
  ApplyShape(edit, Aabb{p.center - r, p.center + r}, sdf, p.material, p.mode);
  return absl::OkStatus();
}

}  // namespace voxcol
