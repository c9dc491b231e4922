#include "core/broadphase/chunk_masks.h"

#include "absl/strings/str_cat.h"

namespace voxcol {
namespace {

constexpr int kHood = kChunkSize + 2;  // 10: the chunk plus one voxel on each side

// 10x10 rows of 10 bits (bit i = voxel x = i - 1), one grid per material class.
struct HoodBits {
  uint16_t solid[kHood][kHood];  // [y][z]
  uint16_t water[kHood][kHood];
  int solid_count = 0;
  int water_count = 0;
};

// The chunk holding neighbourhood coordinate c in [-1, 8] and the local coordinate inside it.
inline int HoodChunk(int c) { return c < 0 ? -1 : (c >= kChunkSize ? 1 : 0); }
inline int HoodLocal(int c) { return c - HoodChunk(c) * kChunkSize; }

// Reads the 10^3 box into bit rows. Rows are read chunk by chunk so the inner 8 voxels of a row
// come from one contiguous run of the centre chunk (or a face neighbour).
void ReadHood(const ChunkNeighbourhood& hood, HoodBits* bits) {
  for (int y = 0; y < kHood; ++y)
    for (int z = 0; z < kHood; ++z) {
      int cy = HoodChunk(y - 1), cz = HoodChunk(z - 1), ly = HoodLocal(y - 1),
          lz = HoodLocal(z - 1);
      uint16_t s = 0, w = 0;
      for (int x = 0; x < kHood; ++x) {
        int cx = HoodChunk(x - 1);
        Voxel v = hood[NeighbourIndex(cx, cy, cz)]->At(HoodLocal(x - 1), ly, lz);
        s |= uint16_t(CountsAsSolid(v)) << x;
        w |= uint16_t(CountsAsWater(v)) << x;
      }
      bits->solid[y][z] = s;
      bits->water[y][z] = w;
      bits->solid_count += __builtin_popcount(s);
      bits->water_count += __builtin_popcount(w);
    }
}

// Dilates a 10^3 grid by one voxel and keeps the inner 8^3 as slice masks.
SliceMasks Dilate(const uint16_t (&rows)[kHood][kHood]) {
  uint16_t dx[kHood][kHood], dz[kHood][kHood];
  for (int y = 0; y < kHood; ++y)
    for (int z = 0; z < kHood; ++z) {
      uint16_t r = rows[y][z];
      dx[y][z] = uint16_t(r | (r << 1) | (r >> 1));
    }
  for (int y = 0; y < kHood; ++y)
    for (int z = 1; z <= kChunkSize; ++z) dz[y][z] = dx[y][z - 1] | dx[y][z] | dx[y][z + 1];
  SliceMasks out{};
  for (int y = 1; y <= kChunkSize; ++y)
    for (int z = 1; z <= kChunkSize; ++z) {
      uint64_t row = (dz[y - 1][z] | dz[y][z] | dz[y + 1][z]) >> 1 & 0xFF;  // bits x = 0..7
      out[y - 1] |= row << (kChunkSize * (z - 1));
    }
  return out;
}

// Row table: bits x0..x1 set in every byte. Column table: bytes z0..z1 all ones.
struct RectTables {
  uint64_t row[kChunkSize][kChunkSize];
  uint64_t col[kChunkSize][kChunkSize];
  constexpr RectTables() : row(), col() {
    for (int a = 0; a < kChunkSize; ++a)
      for (int b = a; b < kChunkSize; ++b) {
        uint64_t bits = ((1ull << (b + 1)) - 1) & ~((1ull << a) - 1);
        row[a][b] = bits * 0x0101010101010101ull;
        uint64_t bytes = 0;
        for (int z = a; z <= b; ++z) bytes |= 0xFFull << (8 * z);
        col[a][b] = bytes;
      }
  }
};
constexpr RectTables kRectTables;

}  // namespace

uint64_t SliceRectMask(int x0, int x1, int z0, int z1) {
  return kRectTables.row[x0][x1] & kRectTables.col[z0][z1];
}

ChunkMasks BuildChunkMasks(const ChunkNeighbourhood& hood) {
  HoodBits bits;
  ReadHood(hood, &bits);
  constexpr int kAll = kHood * kHood * kHood;
  ChunkMasks masks;
  if (bits.solid_count == 0 && bits.water_count == 0) return masks;  // kEmpty
  if (bits.solid_count == kAll || bits.water_count == kAll) {
    masks.kind = bits.solid_count == kAll ? MaskKind::kFullSolid : MaskKind::kFullWater;
    (bits.solid_count == kAll ? masks.solid : masks.water).fill(~0ull);
    return masks;
  }
  masks.kind = MaskKind::kPartial;
  masks.solid = Dilate(bits.solid);
  masks.water = Dilate(bits.water);
  return masks;
}

absl::Status ValidateChunkMasks(const ChunkNeighbourhood& hood, const ChunkMasks& masks) {
  auto at = [&](int x, int y, int z) {  // neighbourhood coordinates in [-1, 8]
    return hood[NeighbourIndex(HoodChunk(x), HoodChunk(y), HoodChunk(z))]->At(
        HoodLocal(x), HoodLocal(y), HoodLocal(z));
  };
  for (int y = 0; y < kChunkSize; ++y)
    for (int z = 0; z < kChunkSize; ++z)
      for (int x = 0; x < kChunkSize; ++x) {
        bool solid = false, water = false;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz)
            for (int dx = -1; dx <= 1; ++dx) {
              Voxel v = at(x + dx, y + dy, z + dz);
              solid |= CountsAsSolid(v);
              water |= CountsAsWater(v);
            }
        int bit = x | z << kChunkBits;
        if (solid != bool(masks.solid[y] >> bit & 1) || water != bool(masks.water[y] >> bit & 1)) {
          return absl::InternalError(
              absl::StrCat("mask mismatch at local voxel (", x, ", ", y, ", ", z, ")"));
        }
      }
  return absl::OkStatus();
}

}  // namespace voxcol
