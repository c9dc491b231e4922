// Small analytic worlds shared by the fuzz targets: generated on first touch like the server's
// world, with solid rock, a ball of partly filled dirt, a thin wall and a lake, so that queries
// meet flat and curved surfaces, edges, water and chunk seams.
#pragma once

#include <cmath>
#include <memory>

#include "core/voxel/world.h"
#include "tests/core/test_worlds.h"

namespace voxcol::fuzz {

// 32^3 voxels (world units -16..16 for voxel size 1, half that for 0.5): 4^3 chunks.
inline std::unique_ptr<World> MakeFuzzWorld(float voxel_size) {
  return testing::MakeFunctionWorld(
      [](const Int3& v) {
        if (v.y < -6) return Voxel{kMaterialRock, 255};
        float dx = v.x - 4.5f, dy = v.y + 1.5f, dz = v.z - 3.5f;
        float d = std::sqrt(dx * dx + dy * dy + dz * dz) - 5.0f;  // ball of radius 5
        if (d < 1.0f) {
          float fill = d <= -1.0f ? 1.0f : 0.5f - 0.5f * d;
          return Voxel{kMaterialDirt, uint8_t(fill * 255.0f)};
        }
        if (v.x == -9 && v.y < 6 && v.z > -12) return Voxel{kMaterialRock, 255};  // a thin wall
        if (v.x < -9 && v.y < -2)
          return Voxel{kMaterialWater, v.y == -3 ? uint8_t(128) : uint8_t(255)};
        return Voxel{};
      },
      Int3{32, 32, 32}, voxel_size);
}

}  // namespace voxcol::fuzz
