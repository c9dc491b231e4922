// A box of voxels packed for export/import (CLI export-region / import-region, AdminService).
//
// Packed format, all integers little endian:
//   bytes 0..3    magic "VXRG"
//   bytes 4..7    uint32 format version (1)
//   bytes 8..19   int32 min x, y, z: first voxel of the box, world voxel coordinates
//   bytes 20..31  int32 size x, y, z: voxels per axis, each >= 1
//   then N = size.x * size.y * size.z material bytes, then N occupancy bytes; voxel (x, y, z)
//   of the box is at index (x - min.x) + size.x * ((z - min.z) + size.z * (y - min.y)),
//   i.e. X fastest, then Z, then Y (the chunk order).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/voxel/world.h"

namespace voxcol::store {

// Largest region accepted (2 MiB packed), so one region fits a default gRPC message.
constexpr int64_t kMaxRegionVoxels = int64_t(1) << 20;

struct Region {
  IntBox box;  // world voxel coordinates, max exclusive
  std::vector<uint8_t> materials;
  std::vector<uint8_t> occupancy;

  Int3 size() const { return box.max - box.min; }
  // Index of a voxel inside `box` in the packed arrays.
  int64_t IndexOf(const Int3& voxel) const;
};

// INVALID_ARGUMENT unless `box` is non-empty, inside the world and at most kMaxRegionVoxels.
absl::Status ValidateRegionBox(const World& world, const IntBox& box);

// Reads the voxels of `box` (validated first) as one snapshot: the chunk pointers are taken under
// World::ReadConsistent (chunks are immutable once published), the copying happens after it, so
// edits are held back only while the chunks are looked up. `version`, if set, receives the
// version the region belongs to. A chunk that cannot be loaded fails the read with its error
// (DATA_LOSS for a corrupt record).
absl::StatusOr<Region> ReadRegion(const World& world, const IntBox& box,
                                  uint64_t* version = nullptr);

// Writes every voxel of `region` into `edit`; the box must be valid for the edit's world.
absl::Status WriteRegion(const Region& region, ChunkEdit& edit);

std::string EncodeRegion(const Region& region);
// INVALID_ARGUMENT for a malformed buffer (bad magic, version, size or length).
absl::StatusOr<Region> DecodeRegion(std::string_view packed);

}  // namespace voxcol::store
