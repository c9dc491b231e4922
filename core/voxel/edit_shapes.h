// Oriented and voxel-aligned edit primitives after Roblox's Terrain API: FillBlock, FillCylinder,
// FillWedge (smooth coverage through ApplyShape, see edit.h), FillRegion, ReplaceMaterial, Clear.
//
// Every function validates its input first and changes nothing on error; the error is
// INVALID_ARGUMENT and its message starts with the offending field's name. Oriented shapes are
// given by a centre (world units, inside the world), a rotation (unit quaternion, local -> world)
// and sizes along the local axes (world units); parts outside the world are clipped.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "core/geometry/vec3.h"
#include "core/voxel/edit.h"
#include "core/voxel/world.h"

namespace voxcol {

// A box with edges size.x/y/z along the rotated local X/Y/Z axes.
struct FillBlockParams {
  Vec3 center;
  Quat rotation;
  Vec3 size;  // world units, each in (0, max_extent]
  uint8_t material = kMaterialRock;
  EditMode mode = EditMode::kAdd;
};

// A solid cylinder whose axis is the rotated local Y axis (as in Roblox's FillCylinder).
struct FillCylinderParams {
  Vec3 center;
  Quat rotation;
  float height = 0;  // world units along the axis, in (0, max_extent]
  float radius = 0;  // world units, in (0, max_radius]
  uint8_t material = kMaterialRock;
  EditMode mode = EditMode::kAdd;
};

// A wedge as in Roblox (WedgePart, FillWedge): the box of `size` cut by the diagonal plane through
// its bottom-front edge (local y = -size.y/2, z = -size.z/2) and its top-back edge (y = +size.y/2,
// z = +size.z/2), keeping the half below the plane. Its cross-section in local YZ is the right
// triangle (-y/2,-z/2), (-y/2,+z/2), (+y/2,+z/2): a full-height back face at +Z, a bottom face,
// and a slope facing local -Z and +Y; the cross-section is the same for every local x.
// Volume = size.x * size.y * size.z / 2.
struct FillWedgeParams {
  Vec3 center;
  Quat rotation;
  Vec3 size;  // world units, each in (0, max_extent]
  uint8_t material = kMaterialRock;
  EditMode mode = EditMode::kAdd;
};

// Every voxel of a voxel-aligned box, with coverage 1 (no smooth boundary).
struct FillRegionParams {
  IntBox region;  // voxel indices, max exclusive; inside the world, <= max_region_voxels
  uint8_t material = kMaterialRock;
  EditMode mode = EditMode::kAdd;
};

// Within `region`, voxels of material `source` become `target`, keeping their occupancy. Two
// cases follow from the canonical voxel form: with source air, empty voxels become full (255)
// voxels of target; with target air, the voxels are emptied.
struct ReplaceMaterialParams {
  IntBox region;  // voxel indices, max exclusive; inside the world, <= max_region_voxels
  uint8_t source = kMaterialRock;
  uint8_t target = kMaterialRock;
};

// Every voxel of `region` becomes air (Roblox's Clear, restricted to a region).
struct ClearParams {
  IntBox region;  // voxel indices, max exclusive; inside the world, <= max_region_voxels
};

absl::Status ValidateFillBlock(const World& world, const FillBlockParams& params,
                               const EditLimits& limits);
absl::Status ValidateFillCylinder(const World& world, const FillCylinderParams& params,
                                  const EditLimits& limits);
absl::Status ValidateFillWedge(const World& world, const FillWedgeParams& params,
                               const EditLimits& limits);
absl::Status ValidateFillRegion(const World& world, const FillRegionParams& params,
                                const EditLimits& limits);
absl::Status ValidateReplaceMaterial(const World& world, const ReplaceMaterialParams& params,
                                     const EditLimits& limits);
absl::Status ValidateClear(const World& world, const ClearParams& params, const EditLimits& limits);

absl::Status FillBlock(ChunkEdit& edit, const FillBlockParams& params, const EditLimits& limits);
absl::Status FillCylinder(ChunkEdit& edit, const FillCylinderParams& params,
                          const EditLimits& limits);
absl::Status FillWedge(ChunkEdit& edit, const FillWedgeParams& params, const EditLimits& limits);
absl::Status FillRegion(ChunkEdit& edit, const FillRegionParams& params, const EditLimits& limits);
absl::Status ReplaceMaterial(ChunkEdit& edit, const ReplaceMaterialParams& params,
                             const EditLimits& limits);
absl::Status Clear(ChunkEdit& edit, const ClearParams& params, const EditLimits& limits);

// Signed distances (world units, negative inside) in the shape's local frame, centred on the
// origin. Exact for block and cylinder; for the wedge the largest signed plane distance, exact
// inside and never larger than the true distance outside. Exposed for tests.
float BlockSdf(const Vec3& local, const Vec3& size);
float CylinderSdf(const Vec3& local, float height, float radius);
float WedgeSdf(const Vec3& local, const Vec3& size);

}  // namespace voxcol
