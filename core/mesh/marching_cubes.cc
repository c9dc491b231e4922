// Marching cubes after Lorensen & Cline (SIGGRAPH 1987) with tables derived in
// marching_cubes_tables.cc; vertices are shared per lattice edge (welded) as in Bourke's
// "Polygonising a scalar field" and computed from global coordinates so chunk seams match exactly.
#include "core/mesh/marching_cubes.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

#include "core/mesh/marching_cubes_tables.h"

namespace voxcol {

namespace {

// Samples cover local voxels [-1, 9] per axis: the chunk, one layer below (for slopes) and two
// above (the cells' +1 corners and their slopes).
constexpr int kLow = 1;
constexpr int kSamples = kChunkSize + 3;
constexpr int kSampleCount = kSamples * kSamples * kSamples;
constexpr uint16_t kNoVertex = 0xFFFF;
constexpr int kStride[3] = {1, kSamples* kSamples, kSamples};  // x, y, z (X fastest, then Z)

constexpr int SampleIndex(int x, int y, int z) {
  return (x + kLow) + kSamples * ((z + kLow) + kSamples * (y + kLow));
}

// Per-mesh scratch: the samples and one vertex id per lattice edge (per axis).
struct Samples {
  uint8_t density[kSampleCount];  // solid occupancy; 0 for air and water
  uint8_t material[kSampleCount];
  uint16_t edge_vertex[3][kSampleCount];
  // Bit i: shell sample i of a MeshSources::generator_parts source, not generated yet (Density).
  uint64_t pending[(kSampleCount + 63) / 64];
  const World* world;  // generates them
  ChunkKey key;
};

// Occupancy at or above this is inside: the integer form of density > kIsoOccupancy.
constexpr uint8_t kInsideOccupancy = 128;
static_assert(kInsideOccupancy - 1 < kIsoOccupancy && kIsoOccupancy < kInsideOccupancy);

// Source offset (-1, 0, 1) of sample coordinate c in [-1, 9] along an axis; the local
// coordinate in that source is c & 7.
constexpr int SourceOffset(int c) { return c < 0 ? -1 : (c < kChunkSize ? 0 : 1); }

void GatherSample(Voxel v, Samples* s, int i) {
  s->density[i] = IsSolidMaterial(v.material) ? v.occupancy : 0;
  s->material[i] = v.material;
}

// Marks the shell samples (one coordinate -1 or 9, the others in [0, 8]) whose source is in
// `generator_parts` pending; Density generates them when first read.
void MarkPendingShell(uint32_t generator_parts, Samples* s) {
  std::fill(std::begin(s->pending), std::end(s->pending), 0);
  if (generator_parts == 0) return;
  for (int axis = 0; axis < 3; ++axis) {
    const int u = (axis + 1) % 3, w = (axis + 2) % 3;
    for (const int c : {-1, kChunkSize + 1}) {
      for (int j = 0; j <= kChunkSize; ++j)
        for (int k = 0; k <= kChunkSize; ++k) {
          Int3 p, d;
          p[axis] = c, p[u] = j, p[w] = k;
          for (int a = 0; a < 3; ++a) d[a] = SourceOffset(p[a]);
          if ((generator_parts >> MeshSourceIndex(d.x, d.y, d.z) & 1) != 0) {
            const int i = SampleIndex(p.x, p.y, p.z);
            s->pending[i >> 6] |= uint64_t{1} << (i & 63);
          }
        }
    }
  }
}

// The density of sample i, generating it first when it is a pending shell sample.
uint8_t Density(Samples& s, int i) {
  if ((s.pending[i >> 6] >> (i & 63) & 1) != 0) {
    const int x = i % kSamples - kLow, z = i / kSamples % kSamples - kLow,
              y = i / (kSamples * kSamples) - kLow;
    const ChunkKey source = s.key + Int3{SourceOffset(x), SourceOffset(y), SourceOffset(z)};
    GatherSample(s.world->GeneratedVoxel(source, ChunkOrigin(s.key) + Int3{x, y, z}), &s, i);
    s.pending[i >> 6] &= ~(uint64_t{1} << (i & 63));
  }
  return s.density[i];
}

// Where the cell corners of a chunk (samples [0, 8] on every axis) lie against the iso-level.
enum class CornerSides { kAllOutside, kAllInside, kMixed };

// Fills the samples row by row (a row of 11 reads the X neighbours -1, 0, 1 of one Y, Z).
// kMixed when some cell of the chunk is crossed by the surface.
CornerSides Gather(const MeshSources& sources, Samples* s) {
  bool any_inside = false, any_outside = false;
  for (int y = -kLow; y < kSamples - kLow; ++y)
    for (int z = -kLow; z < kSamples - kLow; ++z) {
      const int dy = SourceOffset(y), dz = SourceOffset(z), ly = y & 7, lz = z & 7;
      const Chunk& lo = *sources[MeshSourceIndex(-1, dy, dz)];
      const Chunk& mid = *sources[MeshSourceIndex(0, dy, dz)];
      const Chunk& hi = *sources[MeshSourceIndex(1, dy, dz)];
      const int row = SampleIndex(0, y, z);
      GatherSample(lo.At(kChunkSize - 1, ly, lz), s, row - 1);
      for (int x = 0; x < kChunkSize; ++x) GatherSample(mid.At(x, ly, lz), s, row + x);
      GatherSample(hi.At(0, ly, lz), s, row + kChunkSize);
      GatherSample(hi.At(1, ly, lz), s, row + kChunkSize + 1);
      if (y < 0 || z < 0 || y > kChunkSize || z > kChunkSize) continue;
      for (int x = 0; x <= kChunkSize; ++x) {
        const bool inside = s->density[row + x] >= kInsideOccupancy;
        any_inside |= inside;
        any_outside |= !inside;
      }
    }
  if (any_inside && any_outside) return CornerSides::kMixed;
  return any_inside ? CornerSides::kAllInside : CornerSides::kAllOutside;
}

// Cube cases of the eight cells of row (y, z): cell x has its low corner at sample (x, y, z) and
// corner c at (c & 1, c >> 1 & 1, c >> 2), bit c set when that corner is inside.
void RowCases(const Samples& s, int y, int z, uint8_t cases[kChunkSize]) {
  const int sy = kStride[1], sz = kStride[2];
  const uint8_t* d = s.density + SampleIndex(0, y, z);
  for (int x = 0; x < kChunkSize; ++x, ++d) {
    cases[x] =
        uint8_t((d[0] >= kInsideOccupancy) | (d[1] >= kInsideOccupancy) << 1 |
                (d[sy] >= kInsideOccupancy) << 2 | (d[sy + 1] >= kInsideOccupancy) << 3 |
                (d[sz] >= kInsideOccupancy) << 4 | (d[sz + 1] >= kInsideOccupancy) << 5 |
                (d[sy + sz] >= kInsideOccupancy) << 6 | (d[sy + sz + 1] >= kInsideOccupancy) << 7);
  }
}

bool Saturated(uint8_t d) { return d == 0 || d == 255; }

// Derivative of the fill fraction along `axis` at sample i from unsaturated neighbours (central,
// else one-sided); false when both neighbours are saturated.
bool Slope(Samples& s, int i, int axis, float* g) {
  const int st = kStride[axis];
  const uint8_t lo = Density(s, i - st), hi = Density(s, i + st);
  if (!Saturated(lo) && !Saturated(hi)) {
    *g = (float(hi) - float(lo)) * (0.5f / 255.0f);
  } else if (!Saturated(lo) || !Saturated(hi)) {
    *g = (Saturated(lo) ? float(hi) - float(s.density[i]) : float(s.density[i]) - float(lo)) /
         255.0f;
  } else {
    return false;
  }
  return true;
}

// |d fill / d axis| at the unsaturated endpoint `i` of an edge whose other endpoint `far` (the
// neighbour on `axis`, direction dir = +-1) is saturated. The occupancy is clamp(0.5 - d) of a
// distance field (|grad fill| = 1): use the sample beyond i on the same line if it is unsaturated,
// else the unit-gradient rule with the two perpendicular slopes. Never below fill(i) and
// 1 - fill(i) (the clamped neighbours bound it), never above 1.
float AxisSlope(Samples& s, int i, int axis, int dir, float fill) {
  const uint8_t behind = Density(s, i - dir * kStride[axis]);
  float slope;
  float gu, gv;
  if (!Saturated(behind)) {
    slope = std::fabs(float(s.density[i]) - float(behind)) / 255.0f;
  } else if (Slope(s, i, (axis + 1) % 3, &gu) && Slope(s, i, (axis + 2) % 3, &gv)) {
    slope = std::sqrt(std::max(0.0f, 1.0f - gu * gu - gv * gv));
  } else {
    slope = 0.0f;
  }
  const bool far_full = fill < 0.5f;  // the saturated far end is full when i is the empty side
  const float bound = far_full ? std::max(0.5f - fill, 1.0f - fill) : std::max(fill - 0.5f, fill);
  return std::min(1.0f, std::max(slope, bound));
}

// Position of the iso crossing on the lattice edge from sample i0 (global voxel `low`) to the next
// sample along `axis`. Depends only on the global edge and the voxels around it, never on the
// chunk: seams are bit-identical. Both endpoints unsaturated: linear interpolation (exact for a
// linear field). One saturated: the clamped value hides the slope, so step from the unsaturated end
// by (fill - 0.5) / slope with the slope of AxisSlope. Both saturated: the midpoint.
Vec3 EdgePoint(Samples& s, int i0, const Int3& low, int axis) {
  const int i1 = i0 + kStride[axis];
  const uint8_t d0 = s.density[i0], d1 = s.density[i1];
  const float f0 = d0 / 255.0f, f1 = d1 / 255.0f;
  float t;
  if (!Saturated(d0) && !Saturated(d1)) {
    t = (kIsoOccupancy - float(d0)) / (float(d1) - float(d0));
  } else if (!Saturated(d0)) {
    t = std::fabs(f0 - 0.5f) / AxisSlope(s, i0, axis, +1, f0);
  } else if (!Saturated(d1)) {
    t = 1.0f - std::fabs(f1 - 0.5f) / AxisSlope(s, i1, axis, -1, f1);
  } else {
    t = 0.5f;
  }
  Vec3 p(float(low.x) + 0.5f, float(low.y) + 0.5f, float(low.z) + 0.5f);
  p[axis] += t;
  return p;  // voxel units
}

// Fixed point relative to the chunk origin, rounded from the global coordinate so that both
// chunks at a seam store the same global value.
QuantizedVertex Quantize(const Vec3& p, const Int3& origin) {
  QuantizedVertex q;
  for (int a = 0; a < 3; ++a) {
    int64_t global = std::llround(double(p[a]) / double(kVertexQuantum));
    int64_t local = global - int64_t(origin[a]) * int64_t(1.0f / kVertexQuantum);
    assert(local >= 0 && local <= 0xFFFF);
    q[a] = uint16_t(local);
  }
  return q;
}

class CellMesher {
 public:
  CellMesher(Samples& s, const Int3& origin, ChunkMesh* out) : s_(s), origin_(origin), out_(out) {}

  // Emits the triangles of the cell with low corner sample (x, y, z).
  void Mesh(int x, int y, int z, int cube_case) {
    const MarchingCubesCase& mc = MarchingCubesCases()[cube_case];
    for (int t = 0; t < mc.triangle_count; ++t) {
      uint16_t v[3];
      int best_sample = -1;
      for (int k = 0; k < 3; ++k) v[k] = Vertex(x, y, z, mc.triangles[t][k], &best_sample);
      const Vec3 a = out_->Vertex(v[0]);
      // Vertices on distinct edges stay >= ~0.003 voxel apart, 11 quanta; should rounding ever
      // collapse a triangle (coordinates beyond 4096 voxels), the sliver is dropped.
      if (Cross(out_->Vertex(v[1]) - a, out_->Vertex(v[2]) - a) == Vec3()) continue;
      out_->AddTriangle(v[0], v[1], v[2]);
      out_->materials.push_back(s_.material[best_sample]);
    }
  }

 private:
  // Vertex id of cube edge `e` of the cell, created on first use. Also tracks, in *best_sample,
  // the densest inside endpoint seen so far: the triangle takes its material.
  uint16_t Vertex(int x, int y, int z, int e, int* best_sample) {
    int axis = e / 4;
    int c0 = kEdgeCorners[e][0];
    int lx = x + (c0 & 1), ly = y + ((c0 >> 1) & 1), lz = z + ((c0 >> 2) & 1);
    int i0 = SampleIndex(lx, ly, lz);
    int i1 = i0 + kStride[axis];
    int inside = s_.density[i0] > kIsoOccupancy ? i0 : i1;
    if (*best_sample < 0 || s_.density[inside] > s_.density[*best_sample]) *best_sample = inside;
    uint16_t& id = s_.edge_vertex[axis][i0];
    if (id == kNoVertex) {
      id = uint16_t(out_->vertices.size());
      out_->vertices.push_back(
          Quantize(EdgePoint(s_, i0, origin_ + Int3{lx, ly, lz}, axis), origin_));
    }
    return id;
  }

  Samples& s_;
  Int3 origin_;
  ChunkMesh* out_;
};

}  // namespace

MeshSources GatherMeshSources(const World& world, const ChunkKey& key) {
  MeshSources sources;
  sources.key = key;
  sources.world = &world;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const Int3 d{dx, dy, dz};
        const int index = MeshSourceIndex(dx, dy, dz);
        ChunkPtr& source = sources[index];
        // The chunk itself, the world's: the cache keeps it (ChunkCollision::source()).
        if (d == Int3{0, 0, 0}) {
          source = world.GetChunk(key);
          continue;
        }
        // A neighbour resident, stored or edited: as it is.
        absl::StatusOr<ChunkPtr> peek = world.PeekChunk(key + d);
        if (!peek.ok()) {
          source = world.GetChunk(key + d);  // reads as air, as GetChunk does
          continue;
        }
        if (*peek != nullptr) {
          source = *std::move(peek);
          continue;
        }
        // The generator's: of an upper neighbour the cell corners MeshChunk reads (NeighbourPart,
        // which the broadphase's record of the chunk generated just before when it was built:
        // World::GeneratePart remembers it), generated into a chunk of its own that lives as long
        // as `sources`; no proof is asked: it would cost about as much as the part, which near a
        // surface is seldom uniform. A lower neighbour holds no cell corner: an empty chunk,
        // never read, stands in (no reference count: the aliasing constructor).
        sources.generator_parts |= uint32_t{1} << index;
        if (dx < 0 || dy < 0 || dz < 0) {
          static const Chunk kUnread;
          source = ChunkPtr(ChunkPtr(), &kUnread);
          continue;
        }
        auto chunk = std::make_shared<Chunk>();
        world.GeneratePart(key + d, NeighbourPart(key, d), chunk.get());
        source = std::move(chunk);
      }
  return sources;
}

void MeshChunk(const MeshSources& sources, const ChunkKey& key, float voxel_size, ChunkMesh* out,
               SolidCells* solid_cells) {
  SolidCells unused;
  SolidCells& solid = solid_cells != nullptr ? *solid_cells : unused;
  solid.fill(0);
  out->Clear();
  out->origin = ChunkOrigin(key);
  out->voxel_size = voxel_size;
  thread_local Samples samples;
  const CornerSides sides = Gather(sources, &samples);
  if (sides != CornerSides::kMixed) {  // every cell entirely inside or outside: no triangles
    if (sides == CornerSides::kAllInside) solid.fill(~uint64_t{0});
    return;
  }
  for (auto& ids : samples.edge_vertex)
    for (uint16_t& id : ids) id = kNoVertex;
  assert(sources.generator_parts == 0 || sources.key == key);
  MarkPendingShell(sources.generator_parts, &samples);
  samples.world = sources.world;
  samples.key = key;
  CellMesher mesher(samples, ChunkOrigin(key), out);
  uint8_t cases[kChunkSize];
  for (int y = 0; y < kChunkSize; ++y)
    for (int z = 0; z < kChunkSize; ++z) {
      RowCases(samples, y, z, cases);
      for (int x = 0; x < kChunkSize; ++x) {
        if (cases[x] == 255) {
          solid[y] |= uint64_t{1} << (x | z << 3);
        } else if (cases[x] != 0) {
          mesher.Mesh(x, y, z, cases[x]);
        }
      }
    }
  out->ComputeVertexNormals();
  out->CompactMaterials();
}

ChunkMesh MeshChunk(const World& world, const ChunkKey& key, SolidCells* solid_cells) {
  ChunkMesh mesh;
  MeshChunk(GatherMeshSources(world, key), key, world.voxel_size(), &mesh, solid_cells);
  return mesh;
}

}  // namespace voxcol
