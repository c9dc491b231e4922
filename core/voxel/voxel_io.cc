#include "core/voxel/voxel_io.h"

#include "absl/strings/str_cat.h"
#include "core/voxel/edit_validation.h"

namespace voxcol {

void CopyChunkToArrays(const Chunk& chunk, const ChunkKey& key, const IntBox& part,
                       VoxelArrays* out) {
  Int3 origin = ChunkOrigin(key);
  for (int32_t y = part.min.y; y < part.max.y; ++y)
    for (int32_t z = part.min.z; z < part.max.z; ++z) {
      // One X row is contiguous both in the chunk and in the arrays.
      int64_t dst = VoxelArrayIndex(out->region, {part.min.x, y, z});
      const Voxel* src = &chunk.At(part.min.x - origin.x, y - origin.y, z - origin.z);
      for (int32_t i = 0; i < part.max.x - part.min.x; ++i) {
        out->materials[dst + i] = src[i].material;
        out->occupancies[dst + i] = src[i].occupancy;
      }
    }
}

absl::StatusOr<VoxelArrays> ReadVoxels(const World& world, const IntBox& region,
                                       const EditLimits& limits, uint64_t* version) {
  absl::Status status = ValidateRegion(world, region, limits, "region");
  if (!status.ok()) return status;
  VoxelArrays out;
  out.region = region;
  out.materials.resize(region.Volume());
  out.occupancies.resize(region.Volume());
  absl::StatusOr<uint64_t> seen = world.ReadConsistent([&]() -> absl::Status {
    absl::Status load_status;
    ForEachChunkIn(region, [&](const ChunkKey& key, const IntBox& part) {
      if (!load_status.ok()) return;
      absl::StatusOr<ChunkPtr> chunk = world.LoadChunk(key);
      if (!chunk.ok()) {
        load_status = chunk.status();
        return;
      }
      CopyChunkToArrays(**chunk, key, part, &out);
    });
    return load_status;
  });
  if (!seen.ok()) return seen.status();
  if (version != nullptr) *version = *seen;
  return out;
}

absl::Status ValidateWriteVoxels(const World& world, const VoxelArrays& voxels,
                                 const EditLimits& limits) {
  absl::Status status = ValidateRegion(world, voxels.region, limits, "region");
  if (!status.ok()) return status;
  const uint64_t expected = uint64_t(voxels.region.Volume());
  if (voxels.materials.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("materials has ", voxels.materials.size(),
                                                   " entries, the region needs ", expected));
  }
  if (voxels.occupancies.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("occupancies has ", voxels.occupancies.size(),
                                                   " entries, the region needs ", expected));
  }
  return absl::OkStatus();
}

absl::Status WriteVoxels(ChunkEdit& edit, const VoxelArrays& voxels, const EditLimits& limits) {
  absl::Status status = ValidateWriteVoxels(edit.world(), voxels, limits);
  if (!status.ok()) return status;
  ForEachChunkIn(voxels.region, [&](const ChunkKey& key, const IntBox& part) {
    Chunk* chunk = edit.Mutable(key);
    Int3 origin = ChunkOrigin(key);
    for (int32_t y = part.min.y; y < part.max.y; ++y)
      for (int32_t z = part.min.z; z < part.max.z; ++z) {
        int64_t src = VoxelArrayIndex(voxels.region, {part.min.x, y, z});
        Voxel* dst = &chunk->At(part.min.x - origin.x, y - origin.y, z - origin.z);
        for (int32_t i = 0; i < part.max.x - part.min.x; ++i) {
          dst[i] = Canonical({voxels.materials[src + i], voxels.occupancies[src + i]});
        }
      }
  });
  return absl::OkStatus();
}

}  // namespace voxcol
