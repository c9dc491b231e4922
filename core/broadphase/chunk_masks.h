// Per-chunk broadphase masks: where terrain geometry MAY exist, one bit per voxel.
//
// Follows the Roblox voxel-terrain physics design (shared/seeds/roblox-voxel-terrain-physics):
// a voxel that holds material can produce mesher surface anywhere in its 3^3 neighbourhood, so a
// chunk's mask is its occupancy dilated by one voxel. The input is the 10^3 box of the chunk plus
// one voxel of each neighbour; the output keeps the inner 8^3.
//
// Threshold: a voxel counts as solid (water) when its material is solid (water) and occupancy > 0.
// The mesher puts surface wherever a corner with occupancy >= 128 sits next to one below 128, and
// it picks the triangle's material from the dominant corner, so even a voxel with occupancy 1 can
// border (and colour) surface. Counting every non-air voxel keeps the mask a superset of the
// geometry for any iso-level and any material rule; the price is a few extra set bits.
#pragma once

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "core/voxel/chunk.h"

namespace voxcol {

// Layout of one mask: word y is the Y slice, bit (x | z << 3) is voxel (x, y, z). This is the
// chunk's LocalIndex, so bit i of word y is voxel LocalIndex(...) - 64 * y.
using SliceMasks = std::array<uint64_t, kChunkSize>;

enum class MaskKind : uint8_t {
  kEmpty,      // the 10^3 neighbourhood is all air: no geometry, nothing stored
  kFullSolid,  // every voxel of the 10^3 neighbourhood is solid: solid mask all ones, no water
  kFullWater,  // every voxel of the 10^3 neighbourhood is water: water mask all ones, no solid
  kPartial,    // anything else: explicit masks
};

struct ChunkMasks {
  MaskKind kind = MaskKind::kEmpty;
  SliceMasks solid{};
  SliceMasks water{};
};

// The 3x3x3 chunks around a chunk; index (dx+1) + 3*(dz+1) + 9*(dy+1) for offsets in [-1, 1].
// Every entry must be non-null (chunks outside the world are air chunks).
using ChunkNeighbourhood = std::array<const Chunk*, 27>;
constexpr int NeighbourIndex(int dx, int dy, int dz) {
  return (dx + 1) + 3 * (dz + 1) + 9 * (dy + 1);
}

// Builds the masks of the centre chunk of `hood` by bitwise dilation (X by shifts, then Z, then Y
// by ORs of neighbouring rows).
ChunkMasks BuildChunkMasks(const ChunkNeighbourhood& hood);

// Recomputes the masks voxel by voxel (27 reads per voxel, no bit tricks) and compares; the
// message names the first differing voxel. Slow: for VOXCOL_VALIDATE builds and tests.
absl::Status ValidateChunkMasks(const ChunkNeighbourhood& hood, const ChunkMasks& masks);

// Per-voxel class used by the masks (exposed for validation and brute-force tests).
constexpr bool CountsAsSolid(Voxel v) { return IsSolidMaterial(v.material) && v.occupancy > 0; }
constexpr bool CountsAsWater(Voxel v) { return v.material == kMaterialWater && v.occupancy > 0; }

// Mask of the voxels with x in [x0, x1] and z in [z0, z1] of one Y slice (all inclusive, in
// [0, 8)): the AND of a row table (bits x0..x1 in every byte) and a column table (bytes z0..z1).
uint64_t SliceRectMask(int x0, int x1, int z0, int z1);

}  // namespace voxcol
