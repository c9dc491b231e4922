// A voxel is a material and a filled fraction, as in Roblox terrain.
#pragma once

#include <cstdint>

namespace voxcol {

// Material 0 is air, 1 is water, every other value is a solid.
constexpr uint8_t kMaterialAir = 0;
constexpr uint8_t kMaterialWater = 1;
// Solid materials the cave generator uses. Any value in [2, 255] is a valid solid.
constexpr uint8_t kMaterialRock = 2;
constexpr uint8_t kMaterialDirt = 3;
constexpr uint8_t kMaterialGrass = 4;
constexpr uint8_t kMaterialSand = 5;

// Occupancy at or above this counts as filled for blocky queries and as inside for the mesher.
constexpr uint8_t kHalfOccupancy = 128;

struct Voxel {
  uint8_t material = kMaterialAir;
  uint8_t occupancy = 0;  // 0..255, the filled fraction of the voxel

  constexpr bool operator==(const Voxel& o) const {
    return material == o.material && occupancy == o.occupancy;
  }
  constexpr bool operator!=(const Voxel& o) const { return !(*this == o); }
};

constexpr bool IsSolidMaterial(uint8_t material) { return material >= 2; }
// Filled by a solid to at least half: what blocky raycasts hit.
constexpr bool IsSolid(Voxel v) {
  return IsSolidMaterial(v.material) && v.occupancy >= kHalfOccupancy;
}
constexpr bool IsWater(Voxel v) {
  return v.material == kMaterialWater && v.occupancy >= kHalfOccupancy;
}

// Canonical form: air has occupancy 0, and a voxel with occupancy 0 is air.
constexpr Voxel Canonical(Voxel v) {
  return (v.material == kMaterialAir || v.occupancy == 0) ? Voxel{} : v;
}

// Human-readable name of a material ("air", "water", "rock", ... or "material-N").
const char* MaterialName(uint8_t material);

}  // namespace voxcol
