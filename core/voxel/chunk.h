// 8^3 voxel chunks, the unit of physics data, editing and persistence.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "core/geometry/vec3.h"
#include "core/voxel/voxel.h"

namespace voxcol {

constexpr int kChunkBits = 3;
constexpr int kChunkSize = 1 << kChunkBits;  // voxels per chunk edge
constexpr int kChunkVoxels = kChunkSize * kChunkSize * kChunkSize;

// Integer chunk coordinates: chunk (cx, cy, cz) holds voxels [8cx, 8cx+8) x ... .
using ChunkKey = Int3;

// Index of local voxel (x, y, z) in a chunk: X fastest, then Z, then Y. One Y slice is 64
// consecutive voxels, which matches the broadphase mask layout (one uint64_t per Y slice, one
// byte per X row).
constexpr int LocalIndex(int x, int y, int z) {
  return x | (z << kChunkBits) | (y << (2 * kChunkBits));
}

// Chunk holding a voxel; correct for negative coordinates (floor, not truncation): an arithmetic
// shift, which floors (FloorDiv branches on the sign, which mispredicts for a world around 0).
static_assert((-9 >> kChunkBits) == -2 && (-9 & (kChunkSize - 1)) == 7,
              "ChunkOf and LocalOf need an arithmetic right shift and two's complement");
constexpr ChunkKey ChunkOf(const Int3& voxel) {
  return {voxel.x >> kChunkBits, voxel.y >> kChunkBits, voxel.z >> kChunkBits};
}
// Position of a voxel inside its chunk, each component in [0, 8).
constexpr Int3 LocalOf(const Int3& voxel) {
  constexpr int32_t kMask = kChunkSize - 1;
  return {voxel.x & kMask, voxel.y & kMask, voxel.z & kMask};
}
// First voxel (minimum corner) of a chunk.
constexpr Int3 ChunkOrigin(const ChunkKey& key) {
  return {key.x * kChunkSize, key.y * kChunkSize, key.z * kChunkSize};
}

// Calls fn(key, part) for every chunk overlapping `region` (voxel indices, max exclusive), in Y,
// then Z, then X order, where `part` is the region's part inside that chunk (world voxels).
// The voxels of neighbour chunk key + d (d in {-1, 0, 1}^3) inside the 10^3 box of chunk `key`
// (the chunk grown by one voxel on every side): a layer, a row or one voxel. What the broadphase's
// masks read of a neighbour (BroadphaseIndex::Build); of an upper neighbour, also the mesh's cell
// corners there (GatherMeshSources generates this part; the samples beyond it, and a lower
// neighbour's, a mesh reads only near its faces and generates one by one).
inline IntBox NeighbourPart(const ChunkKey& key, const Int3& d) {
  const Int3 origin = ChunkOrigin(key);
  IntBox part;
  for (int a = 0; a < 3; ++a) {
    const int o = origin[a];
    part.min[a] = d[a] < 0 ? o - 1 : (d[a] == 0 ? o : o + kChunkSize);
    part.max[a] = d[a] < 0 ? o : (d[a] == 0 ? o + kChunkSize : o + kChunkSize + 1);
  }
  return part;
}

template <typename Fn>
void ForEachChunkIn(const IntBox& region, Fn&& fn) {
  if (region.Empty()) return;
  ChunkKey lo = ChunkOf(region.min), hi = ChunkOf(region.max - Int3{1, 1, 1});
  for (int32_t cy = lo.y; cy <= hi.y; ++cy)
    for (int32_t cz = lo.z; cz <= hi.z; ++cz)
      for (int32_t cx = lo.x; cx <= hi.x; ++cx) {
        ChunkKey key{cx, cy, cz};
        Int3 origin = ChunkOrigin(key);
        fn(key, region.Intersect({origin, origin + Int3{kChunkSize, kChunkSize, kChunkSize}}));
      }
}

struct Chunk {
  std::array<Voxel, kChunkVoxels> voxels{};

  const Voxel& At(int x, int y, int z) const { return voxels[LocalIndex(x, y, z)]; }
  Voxel& At(int x, int y, int z) { return voxels[LocalIndex(x, y, z)]; }
  const Voxel& At(const Int3& local) const { return At(local.x, local.y, local.z); }
  Voxel& At(const Int3& local) { return At(local.x, local.y, local.z); }

  // True when every voxel equals the first one.
  bool IsUniform() const;
};

// Copies the voxels of `part` (world voxels, a box inside the chunk both hold) from `from` to
// `to`; its other voxels are left as they were.
inline void CopyVoxels(const Chunk& from, const IntBox& part, Chunk* to) {
  for (int32_t y = part.min.y; y < part.max.y; ++y)
    for (int32_t z = part.min.z; z < part.max.z; ++z)
      for (int32_t x = part.min.x; x < part.max.x; ++x) {
        const Int3 local = LocalOf({x, y, z});
        to->At(local) = from.At(local);
      }
}

// Chunks are immutable once published; an edit copies, modifies and publishes a new one.
using ChunkPtr = std::shared_ptr<const Chunk>;

// Shared instance of a chunk filled with one voxel value (air, full rock, full water...).
ChunkPtr UniformChunk(Voxel v);
// The interned chunk UniformChunk(v) returns, read without locking (interned chunks live as long
// as the process). Precondition: a UniformChunk(v) call happened before this one.
const ChunkPtr& InternedUniformChunk(Voxel v);

}  // namespace voxcol
