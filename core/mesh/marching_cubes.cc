// Marching cubes after Lorensen & Cline (SIGGRAPH 1987) with tables derived in
// marching_cubes_tables.cc; vertices are shared per lattice edge (welded) as in Bourke's
// "Polygonising a scalar field" and computed from global coordinates so chunk seams match exactly.
#include "core/mesh/marching_cubes.h"

#include <cassert>
#include <cstdint>

#include "core/mesh/marching_cubes_tables.h"

namespace voxcol {

namespace {

constexpr int kSamples = kChunkSize + 1;  // 9 samples per axis: the chunk plus one neighbour layer
constexpr int kSampleCount = kSamples * kSamples * kSamples;
constexpr uint16_t kNoVertex = 0xFFFF;

constexpr int SampleIndex(int x, int y, int z) { return x + kSamples * (z + kSamples * y); }

// Per-mesh scratch: the 9^3 samples and one vertex id per lattice edge (per axis).
struct Samples {
  uint8_t density[kSampleCount];  // solid occupancy; 0 for air and water
  uint8_t material[kSampleCount];
  uint16_t edge_vertex[3][kSampleCount];
};

void Gather(const MeshSources& sources, Samples* s) {
  for (int y = 0; y < kSamples; ++y)
    for (int z = 0; z < kSamples; ++z)
      for (int x = 0; x < kSamples; ++x) {
        int src = (x >> kChunkBits) | ((y >> kChunkBits) << 1) | ((z >> kChunkBits) << 2);
        Voxel v =
            sources[src]->At(x & (kChunkSize - 1), y & (kChunkSize - 1), z & (kChunkSize - 1));
        int i = SampleIndex(x, y, z);
        s->density[i] = IsSolidMaterial(v.material) ? v.occupancy : 0;
        s->material[i] = v.material;
      }
}

// Cube case of the cell with low corner sample (x, y, z); corner c at (c & 1, c >> 1 & 1, c >> 2).
int CellCase(const Samples& s, int x, int y, int z) {
  int cube_case = 0;
  for (int c = 0; c < 8; ++c) {
    int i = SampleIndex(x + (c & 1), y + ((c >> 1) & 1), z + ((c >> 2) & 1));
    cube_case |= (s.density[i] > kIsoOccupancy) << c;
  }
  return cube_case;
}

// Position of the iso crossing on the lattice edge from global voxel `low` along `axis`. Depends
// only on the global edge and the two densities, never on the chunk: seams are bit-identical.
Vec3 EdgePoint(const Int3& low, int axis, uint8_t d_low, uint8_t d_high, float voxel_size) {
  // d_low and d_high straddle the iso level, so t lies strictly inside (0, 1).
  float t = (kIsoOccupancy - float(d_low)) / (float(d_high) - float(d_low));
  Vec3 p(float(low.x) + 0.5f, float(low.y) + 0.5f, float(low.z) + 0.5f);
  p[axis] += t;
  return p * voxel_size;
}

class CellMesher {
 public:
  CellMesher(Samples& s, const Int3& origin, float voxel_size, ChunkMesh* out)
      : s_(s), origin_(origin), voxel_size_(voxel_size), out_(out) {}

  // Emits the triangles of the cell with low corner sample (x, y, z).
  void Mesh(int x, int y, int z, int cube_case) {
    const MarchingCubesCase& mc = MarchingCubesCases()[cube_case];
    for (int t = 0; t < mc.triangle_count; ++t) {
      uint16_t v[3];
      int best_sample = -1;
      for (int k = 0; k < 3; ++k) v[k] = Vertex(x, y, z, mc.triangles[t][k], &best_sample);
      const Vec3& a = out_->vertices[v[0]];
      // Only at huge coordinates can rounding collapse a triangle; such slivers are dropped.
      if (Cross(out_->vertices[v[1]] - a, out_->vertices[v[2]] - a) == Vec3()) continue;
      out_->indices.insert(out_->indices.end(), {v[0], v[1], v[2]});
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
    int i1 = i0 + (axis == 0 ? 1 : (axis == 1 ? kSamples * kSamples : kSamples));
    int inside = s_.density[i0] > kIsoOccupancy ? i0 : i1;
    if (*best_sample < 0 || s_.density[inside] > s_.density[*best_sample]) *best_sample = inside;
    uint16_t& id = s_.edge_vertex[axis][i0];
    if (id == kNoVertex) {
      id = uint16_t(out_->vertices.size());
      out_->vertices.push_back(
          EdgePoint(origin_ + Int3{lx, ly, lz}, axis, s_.density[i0], s_.density[i1], voxel_size_));
    }
    return id;
  }

  Samples& s_;
  Int3 origin_;
  float voxel_size_;
  ChunkMesh* out_;
};

}  // namespace

MeshSources GatherMeshSources(const World& world, const ChunkKey& key) {
  MeshSources sources;
  for (int i = 0; i < 8; ++i)
    sources[i] = world.GetChunk(key + Int3{i & 1, (i >> 1) & 1, (i >> 2) & 1});
  return sources;
}

void MeshChunk(const MeshSources& sources, const ChunkKey& key, float voxel_size, ChunkMesh* out) {
  out->Clear();
  thread_local Samples samples;
  Gather(sources, &samples);
  for (auto& ids : samples.edge_vertex)
    for (uint16_t& id : ids) id = kNoVertex;
  CellMesher mesher(samples, ChunkOrigin(key), voxel_size, out);
  for (int y = 0; y < kChunkSize; ++y)
    for (int z = 0; z < kChunkSize; ++z)
      for (int x = 0; x < kChunkSize; ++x) {
        int cube_case = CellCase(samples, x, y, z);
        if (cube_case != 0 && cube_case != 255) mesher.Mesh(x, y, z, cube_case);
      }
}

ChunkMesh MeshChunk(const World& world, const ChunkKey& key) {
  ChunkMesh mesh;
  MeshChunk(GatherMeshSources(world, key), key, world.voxel_size(), &mesh);
  return mesh;
}

IntBox MeshedChunkRange(const World& world) {
  IntBox range = world.chunk_bounds();
  range.min = range.min - Int3{1, 1, 1};
  return range;
}

}  // namespace voxcol
