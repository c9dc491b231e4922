#include "core/store/region_file.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace voxcol::store {
namespace {

constexpr char kMagic[4] = {'V', 'X', 'R', 'G'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 32;

void PutU32(uint32_t v, std::string* out) {
  for (int b = 0; b < 4; ++b) out->push_back(char(v >> (8 * b)));
}

uint32_t GetU32(std::string_view in, size_t offset) {
  uint32_t v = 0;
  for (int b = 0; b < 4; ++b) v |= uint32_t(uint8_t(in[offset + b])) << (8 * b);
  return v;
}

int64_t VoxelCount(const IntBox& box) {
  Int3 s = box.max - box.min;
  return int64_t(s.x) * s.y * s.z;
}

}  // namespace

int64_t Region::IndexOf(const Int3& voxel) const {
  Int3 s = size(), d = voxel - box.min;
  return d.x + int64_t(s.x) * (d.z + int64_t(s.z) * d.y);
}

absl::Status ValidateRegionBox(const World& world, const IntBox& box) {
  const IntBox& bounds = world.voxel_bounds();
  for (int a = 0; a < 3; ++a) {
    if (box.min[a] >= box.max[a])
      return absl::InvalidArgumentError("box: min must be below max on every axis");
    if (box.min[a] < bounds.min[a] || box.max[a] > bounds.max[a]) {
      return absl::InvalidArgumentError("box: must lie inside the world's voxel bounds");
    }
  }
  if (VoxelCount(box) > kMaxRegionVoxels) {
    return absl::InvalidArgumentError(
        absl::StrCat("box: ", VoxelCount(box), " voxels exceed the limit of ", kMaxRegionVoxels));
  }
  return absl::OkStatus();
}

absl::StatusOr<Region> ReadRegion(const World& world, const IntBox& box, uint64_t* version) {
  if (absl::Status s = ValidateRegionBox(world, box); !s.ok()) return s;
  // The chunks of one version, looked up once each.
  const ChunkKey lo = ChunkOf(box.min), hi = ChunkOf(box.max - Int3{1, 1, 1});
  std::vector<ChunkPtr> chunks;
  absl::StatusOr<uint64_t> seen = world.ReadConsistent([&]() -> absl::Status {
    for (int cy = lo.y; cy <= hi.y; ++cy)
      for (int cz = lo.z; cz <= hi.z; ++cz)
        for (int cx = lo.x; cx <= hi.x; ++cx) {
          absl::StatusOr<ChunkPtr> chunk = world.LoadChunk({cx, cy, cz});
          if (!chunk.ok()) return chunk.status();
          chunks.push_back(*std::move(chunk));
        }
    return absl::OkStatus();
  });
  if (!seen.ok()) return seen.status();
  if (version != nullptr) *version = *seen;
  Region region{box, std::vector<uint8_t>(VoxelCount(box)), std::vector<uint8_t>(VoxelCount(box))};
  size_t next = 0;
  for (int cy = lo.y; cy <= hi.y; ++cy)
    for (int cz = lo.z; cz <= hi.z; ++cz)
      for (int cx = lo.x; cx <= hi.x; ++cx) {
        const ChunkPtr* chunk = &chunks[next++];
        Int3 origin = ChunkOrigin({cx, cy, cz});
        for (int y = std::max(box.min.y, origin.y); y < std::min(box.max.y, origin.y + kChunkSize);
             ++y)
          for (int z = std::max(box.min.z, origin.z);
               z < std::min(box.max.z, origin.z + kChunkSize); ++z)
            for (int x = std::max(box.min.x, origin.x);
                 x < std::min(box.max.x, origin.x + kChunkSize); ++x) {
              Voxel v = (*chunk)->At(Int3{x, y, z} - origin);
              int64_t i = region.IndexOf({x, y, z});
              region.materials[i] = v.material;
              region.occupancy[i] = v.occupancy;
            }
      }
  return region;
}

absl::Status WriteRegion(const Region& region, ChunkEdit& edit) {
  if (absl::Status s = ValidateRegionBox(edit.world(), region.box); !s.ok()) return s;
  const IntBox& b = region.box;
  for (int y = b.min.y; y < b.max.y; ++y)
    for (int z = b.min.z; z < b.max.z; ++z)
      for (int x = b.min.x; x < b.max.x; ++x) {
        int64_t i = region.IndexOf({x, y, z});
        edit.Set({x, y, z}, Voxel{region.materials[i], region.occupancy[i]});
      }
  return absl::OkStatus();
}

std::string EncodeRegion(const Region& region) {
  std::string out(kMagic, 4);
  PutU32(kFormatVersion, &out);
  for (int a = 0; a < 3; ++a) PutU32(uint32_t(region.box.min[a]), &out);
  for (int a = 0; a < 3; ++a) PutU32(uint32_t(region.size()[a]), &out);
  out.append(region.materials.begin(), region.materials.end());
  out.append(region.occupancy.begin(), region.occupancy.end());
  return out;
}

absl::StatusOr<Region> DecodeRegion(std::string_view packed) {
  if (packed.size() < kHeaderBytes || std::memcmp(packed.data(), kMagic, 4) != 0) {
    return absl::InvalidArgumentError("region: not a packed voxel region (bad magic)");
  }
  if (GetU32(packed, 4) != kFormatVersion)
    return absl::InvalidArgumentError("region: unknown format version");
  Region region;
  for (int a = 0; a < 3; ++a) {
    region.box.min[a] = int32_t(GetU32(packed, 8 + 4 * a));
    int64_t size = int32_t(GetU32(packed, 20 + 4 * a));
    // The box's end must be an int32 voxel coordinate too (found by fuzzing: min near 2^31
    // wrapped).
    if (size < 1 || size > kMaxRegionVoxels ||
        region.box.min[a] + size > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError("region: bad size");
    }
    region.box.max[a] = int32_t(region.box.min[a] + size);
  }
  int64_t n = VoxelCount(region.box);
  if (n > kMaxRegionVoxels || packed.size() != kHeaderBytes + 2 * size_t(n)) {
    return absl::InvalidArgumentError("region: length does not match the header's size");
  }
  const char* data = packed.data() + kHeaderBytes;
  region.materials.assign(data, data + n);
  region.occupancy.assign(data + n, data + 2 * n);
  return region;
}

}  // namespace voxcol::store
