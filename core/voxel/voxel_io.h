// Bulk voxel transfer, after Roblox's Terrain:ReadVoxels / WriteVoxels: a region's materials and
// occupancies as two packed byte arrays.
//
// Array layout: voxel (x, y, z) of region [min, max) is at index
//   (x - min.x) + (z - min.z) * nx + (y - min.y) * nx * nz,   nx = max.x - min.x, nz = max.z -
//   min.z
// i.e. X fastest, then Z, then Y (the order of voxels inside a chunk).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/voxel/edit.h"
#include "core/voxel/world.h"

namespace voxcol {

struct VoxelArrays {
  IntBox region;                     // voxel indices, max exclusive
  std::vector<uint8_t> materials;    // region.Volume() entries, layout above
  std::vector<uint8_t> occupancies;  // region.Volume() entries, 0..255
};

// Index of world voxel `v` in the arrays of `region`. Precondition: region.Contains(v).
inline int64_t VoxelArrayIndex(const IntBox& region, const Int3& v) {
  int64_t nx = region.max.x - region.min.x, nz = region.max.z - region.min.z;
  return (v.x - region.min.x) + (v.z - region.min.z) * nx + int64_t(v.y - region.min.y) * nx * nz;
}

// A region's voxels as one consistent snapshot: every voxel is from the same world version, which
// is returned in *version. Errors: INVALID_ARGUMENT (field "region") for an empty region, one
// outside the world or larger than limits.max_region_voxels; a chunk load error (e.g. DATA_LOSS).
absl::StatusOr<VoxelArrays> ReadVoxels(const World& world, const IntBox& region,
                                       const EditLimits& limits, uint64_t* version);

// Checks a WriteVoxels input: the region as in ReadVoxels and both arrays of region.Volume()
// entries (fields "materials", "occupancies").
absl::Status ValidateWriteVoxels(const World& world, const VoxelArrays& voxels,
                                 const EditLimits& limits);

// Overwrites every voxel of voxels.region. Voxels are stored in canonical form (material air or
// occupancy 0 both mean an empty air voxel), so a ReadVoxels returns exactly what was written for
// canonical input. Validates first and changes nothing on error.
absl::Status WriteVoxels(ChunkEdit& edit, const VoxelArrays& voxels, const EditLimits& limits);

// Copies the part of `chunk` (at `key`) inside `part` into arrays laid out for `region`.
// Precondition: `part` lies inside both the chunk and `region`; the arrays have region.Volume()
// entries.
void CopyChunkToArrays(const Chunk& chunk, const ChunkKey& key, const IntBox& part,
                       VoxelArrays* out);

}  // namespace voxcol
