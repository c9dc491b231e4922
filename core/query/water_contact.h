// A shape's contact with water, for buoyancy: integrated from the water voxels' occupancy (a water
// voxel is filled from its bottom to occupancy / 255 of its height, or to the top when water lies
// above it). Water is not meshed; it is answered from the masks and the voxels.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/narrowphase/support.h"

namespace voxcol {

struct WaterContact {
  bool in_water = false;
  float submerged_fraction = 0;  // 0..1 of the shape's volume
  float submerged_volume = 0;    // world units^3
  float surface_height = 0;      // world Y of the highest water surface over the shape
  Vec3 center_of_buoyancy;       // world units: centroid of the submerged part (when in_water)
};

// Integrates the shape's volume under water over 12 x 12 vertical lines through its bounds: each
// line's span inside the shape is intersected with the water of its voxel column. `water_chunks`,
// if set, receives the chunks whose water the shape reaches. Returns the error of a chunk that
// could not be loaded (never reads it as dry land).
absl::Status IntegrateWater(const BroadphaseIndex& index, const PosedShape& s, WaterContact* out,
                            std::vector<ChunkKey>* water_chunks);

}  // namespace voxcol
