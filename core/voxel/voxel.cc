#include "core/voxel/voxel.h"

namespace voxcol {

const char* MaterialName(uint8_t material) {
  switch (material) {
    case kMaterialAir:
      return "air";
    case kMaterialWater:
      return "water";
    case kMaterialRock:
      return "rock";
    case kMaterialDirt:
      return "dirt";
    case kMaterialGrass:
      return "grass";
    case kMaterialSand:
      return "sand";
    default:
      return "solid";
  }
}

}  // namespace voxcol
