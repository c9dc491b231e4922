#include "core/mesh/marching_cubes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/mesh/marching_cubes_tables.h"
#include "core/voxel/edit.h"
#include "tests/core/test_meshes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

using PointKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // exact float bits

PointKey KeyOf(const Vec3& p) {
  uint32_t b[3];
  std::memcpy(b, &p, sizeof(b));
  return {b[0], b[1], b[2]};
}

TEST(MarchingCubesTablesTest, EveryCaseUsesExactlyItsCrossingEdges) {
  for (int c = 0; c < 256; ++c) {
    const MarchingCubesCase& mc = MarchingCubesCases()[c];
    std::set<int> crossing, used;
    for (int e = 0; e < 12; ++e) {
      if (((c >> kEdgeCorners[e][0]) & 1) != ((c >> kEdgeCorners[e][1]) & 1)) crossing.insert(e);
    }
    for (int t = 0; t < mc.triangle_count; ++t) {
      const auto& tri = mc.triangles[t];
      EXPECT_TRUE(tri[0] != tri[1] && tri[1] != tri[2] && tri[0] != tri[2]) << "case " << c;
      used.insert(tri.begin(), tri.end());
    }
    EXPECT_EQ(crossing, used) << "case " << c;
    EXPECT_EQ(mc.triangle_count == 0, c == 0 || c == 255) << "case " << c;
  }
}

// A lone inside corner gives one triangle whose normal points away from that corner.
TEST(MarchingCubesTablesTest, SingleCornerTriangleFacesAwayFromTheCorner) {
  for (int corner = 0; corner < 8; ++corner) {
    const MarchingCubesCase& mc = MarchingCubesCases()[1 << corner];
    ASSERT_EQ(mc.triangle_count, 1);
    Vec3 p[3];
    for (int k = 0; k < 3; ++k) {
      int e = mc.triangles[0][k];
      int c0 = kEdgeCorners[e][0], c1 = kEdgeCorners[e][1];
      p[k] = (Vec3(c0 & 1, (c0 >> 1) & 1, c0 >> 2) + Vec3(c1 & 1, (c1 >> 1) & 1, c1 >> 2)) * 0.5f;
    }
    Vec3 n = Cross(p[1] - p[0], p[2] - p[0]);
    Vec3 c(corner & 1, (corner >> 1) & 1, corner >> 2);
    EXPECT_LT(Dot(n, c - p[0]), 0.0f) << "corner " << corner;
  }
}

struct TopologyReport {
  size_t triangles = 0;
  size_t unmatched_edges = 0;  // directed edges without exactly one reverse
  size_t duplicate_edges = 0;  // directed edges seen more than once
  size_t degenerate = 0;
  double volume = 0;  // enclosed volume, voxel units (world units^3 / h^3)
  double area = 0;    // surface area, voxel units
};

// Welds all chunk meshes of the world by exact position and checks the oracle of DESIGN.md 8.
TopologyReport CheckTopology(const World& world) {
  absl::flat_hash_map<PointKey, uint32_t> ids;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, int> directed;
  TopologyReport r;
  IntBox range = MeshedChunkRange(world);
  ChunkMesh mesh;
  const float h = world.voxel_size();
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int x = range.min.x; x < range.max.x; ++x) {
        MeshChunk(GatherMeshSources(world, {x, y, z}), {x, y, z}, h, &mesh);
        for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
          uint32_t v[3];
          for (int k = 0; k < 3; ++k) {
            v[k] = ids.try_emplace(KeyOf(mesh.Corner(t, k)), uint32_t(ids.size())).first->second;
          }
          Vec3 a = mesh.Corner(t, 0) / h, b = mesh.Corner(t, 1) / h, c = mesh.Corner(t, 2) / h;
          Vec3 n = Cross(b - a, c - a);
          if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2] || n == Vec3()) ++r.degenerate;
          r.volume += double(Dot(a, Cross(b, c))) / 6.0;
          r.area += 0.5 * double(Length(n));
          for (int k = 0; k < 3; ++k) ++directed[{v[k], v[(k + 1) % 3]}];
          ++r.triangles;
        }
      }
  for (const auto& [edge, count] : directed) {
    if (count > 1) ++r.duplicate_edges;
    auto rev = directed.find({edge.second, edge.first});
    if (rev == directed.end() || rev->second != 1 || count != 1) ++r.unmatched_edges;
  }
  return r;
}

double SolidSamples(const World& world) {
  double n = 0;
  IntBox b = world.voxel_bounds();
  for (int y = b.min.y; y < b.max.y; ++y)
    for (int z = b.min.z; z < b.max.z; ++z)
      for (int x = b.min.x; x < b.max.x; ++x) {
        Voxel v = world.GetVoxel({x, y, z});
        n += IsSolidMaterial(v.material) && v.occupancy > kIsoOccupancy;
      }
  return n;
}

void ExpectClosedOutwardManifold(const World& world) {
  TopologyReport r = CheckTopology(world);
  double solid = SolidSamples(world);
  std::printf(
      "triangles %zu, unmatched edges %zu, duplicate edges %zu, degenerate %zu, volume %.1f vs "
      "%.0f solid samples, area %.0f\n",
      r.triangles, r.unmatched_edges, r.duplicate_edges, r.degenerate, r.volume, solid, r.area);
  EXPECT_GT(r.triangles, 1000u);
  EXPECT_EQ(r.unmatched_edges, 0u);
  EXPECT_EQ(r.duplicate_edges, 0u);
  EXPECT_EQ(r.degenerate, 0u);
  // Outward (towards empty space) winding makes the enclosed volume positive. Each inside sample
  // stands for one unit cube around it; the surface lies within half a voxel of the cube faces,
  // so the two volumes differ by less than area x 0.5.
  EXPECT_GT(r.volume, 0.0);
  EXPECT_NEAR(r.volume, solid, 0.5 * r.area);
}

TEST(MarchingCubesTest, CaveWorldMeshIsClosedOutwardOrientedManifold) {
  auto world = testing::MakeCaveWorld(3, {64, 64, 64});
  ExpectClosedOutwardManifold(*world);
}

TEST(MarchingCubesTest, CaveWorldStaysClosedManifoldAfterRandomEdits) {
  auto world = testing::MakeCaveWorld(4, {64, 64, 64});
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-30, 30), ur(1.5f, 6.0f);
  for (int i = 0; i < 40; ++i) {
    FillBallParams p{{u(rng), u(rng), u(rng)},
                     ur(rng),
                     uint8_t(i % 3 == 0 ? kMaterialAir : 2 + i % 4),
                     i % 2 ? EditMode::kAdd : EditMode::kSubtract};
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, p, EditLimits{}); }).ok());
  }
  ExpectClosedOutwardManifold(*world);
}

// Random occupancies everywhere: every ambiguous configuration occurs many times.
TEST(MarchingCubesTest, RandomNoiseWorldIsClosedOutwardOrientedManifold) {
  auto world = testing::MakeFunctionWorld(
      [](const Int3& v) {
        uint32_t h =
            uint32_t(v.x) * 73856093u ^ uint32_t(v.y) * 19349663u ^ uint32_t(v.z) * 83492791u;
        h = (h ^ (h >> 13)) * 0x5bd1e995u;
        return Voxel{uint8_t(2 + (h >> 8) % 3), uint8_t(h >> 24)};
      },
      {32, 32, 32}, 0.5f);
  TopologyReport r = CheckTopology(*world);
  EXPECT_GT(r.triangles, 10000u);
  EXPECT_EQ(r.unmatched_edges, 0u);
  EXPECT_EQ(r.duplicate_edges, 0u);
  EXPECT_EQ(r.degenerate, 0u);
  EXPECT_GT(r.volume, 0.0);
}

// A chunk meshed before its neighbours were generated (GatherMeshSources generates the cell
// corners of its upper neighbours, and MeshChunk the shell voxels it reads) equals the mesh built
// after all 27 sources were generated whole, also at the faces of a world whose size is not a
// multiple of 8, where a part is cleared outside the world box: with a generator that keeps the
// default ChunkGenerator::GeneratePart (the whole chunk generated aside; World::GeneratedVoxel then
// remembers it whole), with terrain that goes on beyond the box, blocky and with graded occupancy
// (whose clamped slopes read the shell).
TEST(MarchingCubesTest, ColdMeshesEqualWarmOnesAtTheFacesOfAnOddSizedWorld) {
  const Int3 size{20, 20, 20};  // [-10, 10): the chunks at -16 and 8 straddle the box
  auto blocky = [](const Int3& v) {
    return v.y + (v.x + v.z) / 3 < 2 ? Voxel{kMaterialRock, 255} : Voxel{};
  };
  auto graded = [](const Int3& v) {
    const float f = float(v.y) + float(v.x + 2 * v.z) / 3.0f - 2.0f;  // signed distance-like
    const float fill = std::clamp(0.5f - 0.6f * f, 0.0f, 1.0f);
    return fill > 0 ? Voxel{kMaterialRock, uint8_t(std::lround(fill * 255))} : Voxel{};
  };
  for (const auto& field :
       {std::function<Voxel(const Int3&)>(blocky), std::function<Voxel(const Int3&)>(graded)}) {
    std::unique_ptr<World> probe = testing::MakeFunctionWorld(field, size);
    const IntBox range = MeshedChunkRange(*probe);
    int meshes = 0;
    for (int y = range.min.y; y < range.max.y; ++y)
      for (int z = range.min.z; z < range.max.z; ++z)
        for (int x = range.min.x; x < range.max.x; ++x) {
          const ChunkKey key{x, y, z};
          auto cold = testing::MakeFunctionWorld(field, size);
          auto warm = testing::MakeFunctionWorld(field, size);
          for (int i = 0; i < 27; ++i)
            warm->GetChunk(key + Int3{i % 3 - 1, i / 3 % 3 - 1, i / 9 - 1});
          const ChunkMesh c = MeshChunk(*cold, key), w = MeshChunk(*warm, key);
          ASSERT_EQ(c.vertices, w.vertices) << x << "," << y << "," << z;
          ASSERT_EQ(testing::SortedTriangles(c), testing::SortedTriangles(w))
              << x << "," << y << "," << z;
          meshes += !w.empty();
        }
    EXPECT_GT(meshes, 20);
  }
}

// The cave generator counting the single voxels it is asked for apart from a chunk's first
// voxel: the shell samples MeshChunk generates on demand (World::GeneratedVoxel), which lie one
// voxel beyond the meshed chunk's cell corners on an axis, at local 7 or 1 of their chunk there.
// (The part of a mesh's upper corner neighbour is that neighbour's voxel (0, 0, 0).)
class CountingCaves : public ChunkGenerator {
 public:
  CountingCaves(uint64_t seed, const IntBox& bounds) : caves_(seed, bounds) {}
  void Generate(const ChunkKey& key, Chunk* out) const override { caves_.Generate(key, out); }
  uint32_t Version() const override { return caves_.Version(); }
  bool ProvenUniform(const IntBox& voxels, Voxel* fill) const override {
    return caves_.ProvenUniform(voxels, fill);
  }
  void GeneratePart(const ChunkKey& key, const IntBox& voxels, Chunk* out) const override {
    const Int3 size = voxels.max - voxels.min;
    single_voxels += size.x * size.y * size.z == 1 && !(LocalOf(voxels.min) == Int3{0, 0, 0});
    caves_.GeneratePart(key, voxels, out);
  }
  bool GeneratesPartsAlone() const override { return true; }
  mutable int single_voxels = 0;

 private:
  CaveGenerator caves_;
};

// The cave generator's parts (eight voxels per noise call along a whole row) and its single
// voxels (the shell samples MeshChunk generates when it reads them): a mesh built from a world
// whose neighbours were never generated, and one where a random half of them is resident, equal
// bit for bit the mesh built from 27 resident chunks, at the faces of an odd-sized world too;
// and the meshes did read shell samples from the generator, a few per mesh.
TEST(MarchingCubesTest, MeshesWithTheShellOnDemandEqualWarmOnesInACaveWorld) {
  const Int3 size{60, 52, 44};  // not multiples of 8: parts straddle the world box
  const WorldConfig config{size, 1.0f, 3};
  auto make_world = [&] {
    return std::make_unique<World>(config,
                                   std::make_unique<CountingCaves>(3, WorldVoxelBounds(config)));
  };
  std::unique_ptr<World> warm = make_world();
  const IntBox range = MeshedChunkRange(*warm);
  for (int y = range.min.y - 1; y <= range.max.y; ++y)
    for (int z = range.min.z - 1; z <= range.max.z; ++z)
      for (int x = range.min.x - 1; x <= range.max.x; ++x) warm->GetChunk({x, y, z});
  std::mt19937 rng(11);
  int meshes = 0, single_voxels = 0;
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int x = range.min.x; x < range.max.x; ++x) {
        const ChunkKey key{x, y, z};
        const ChunkMesh w = MeshChunk(*warm, key);
        for (const bool half_resident : {false, true}) {
          std::unique_ptr<World> cold = make_world();
          if (half_resident) {
            for (int i = 0; i < 27; ++i)
              if (rng() % 2 == 0) cold->GetChunk(key + Int3{i % 3 - 1, i / 3 % 3 - 1, i / 9 - 1});
          }
          const auto& generator = static_cast<const CountingCaves&>(cold->generator());
          ChunkMesh c;
          MeshChunk(GatherMeshSources(*cold, key), key, cold->voxel_size(), &c);
          single_voxels += generator.single_voxels;
          ASSERT_EQ(c.vertices, w.vertices) << x << "," << y << "," << z << " " << half_resident;
          ASSERT_EQ(testing::SortedTriangles(c), testing::SortedTriangles(w))
              << x << "," << y << "," << z << " " << half_resident;
        }
        meshes += !w.empty();
      }
  EXPECT_GT(meshes, 40);
  // Meshes read shell samples near the faces of their chunk: measured 3,059 for the 184 meshes
  // with triangles, each built twice (~8 per build); all of the shell is ~500 per build.
  EXPECT_GT(single_voxels, meshes);
  EXPECT_LT(single_voxels, 2 * 50 * meshes);
  std::printf("shell voxels generated on demand: %d for %d meshes, twice\n", single_voxels, meshes);
}

// Vertices on the face shared by two chunks are the same floats on both sides.
TEST(MarchingCubesTest, SeamVerticesAreBitIdentical) {
  auto world = testing::MakeCaveWorld(5, {64, 64, 64});
  IntBox range = world->chunk_bounds();
  size_t compared = 0;
  for (int y = range.min.y; y < range.max.y - 1; ++y)
    for (int z = range.min.z; z < range.max.z - 1; ++z)
      for (int x = range.min.x; x < range.max.x - 1; ++x) {
        ChunkKey key{x, y, z};
        ChunkMesh mesh = MeshChunk(*world, key);
        for (int axis = 0; axis < 3; ++axis) {
          ChunkKey next = key;
          next[axis] += 1;
          ChunkMesh other = MeshChunk(*world, next);
          float plane = (float(ChunkOrigin(next)[axis]) + 0.5f) * world->voxel_size();
          std::set<PointKey> mine, theirs;
          for (uint32_t i = 0; i < mesh.vertex_count(); ++i)
            if (mesh.Vertex(i)[axis] == plane) mine.insert(KeyOf(mesh.Vertex(i)));
          for (uint32_t i = 0; i < other.vertex_count(); ++i)
            if (other.Vertex(i)[axis] == plane) theirs.insert(KeyOf(other.Vertex(i)));
          EXPECT_EQ(mine, theirs) << "chunks " << x << "," << y << "," << z << " axis " << axis;
          compared += mine.size();
        }
      }
  EXPECT_GT(compared, 1000u);
}

// Every vertex lies in the cell region the chunk owns.
TEST(MarchingCubesTest, VerticesStayInTheChunkCellRegion) {
  auto world = testing::MakeCaveWorld(6, {64, 64, 64});
  IntBox range = MeshedChunkRange(*world);
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int x = range.min.x; x < range.max.x; ++x) {
      ChunkKey key{x, y, 0};
      ChunkMesh mesh = MeshChunk(*world, key);
      Vec3 lo = (Vec3(ChunkOrigin(key).x, ChunkOrigin(key).y, ChunkOrigin(key).z) +
                 Vec3(0.5f, 0.5f, 0.5f));
      Aabb box{lo, lo + Vec3(8, 8, 8)};
      for (uint32_t i = 0; i < mesh.vertex_count(); ++i) EXPECT_TRUE(box.Contains(mesh.Vertex(i)));
    }
}

// The stored vertex normals are the area-weighted sums of the face normals around each vertex
// (the smooth raycast interpolates them), within the half-float rounding.
TEST(MarchingCubesTest, StoredVertexNormalsAreTheAreaWeightedFaceSums) {
  auto world = testing::MakeCaveWorld(6, {64, 64, 64});
  IntBox range = MeshedChunkRange(*world);
  size_t vertices = 0;
  double max_angle = 0, max_rel = 0;
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int x = range.min.x; x < range.max.x; ++x) {
      ChunkMesh mesh = MeshChunk(*world, {x, y, 1});
      if (mesh.empty()) continue;
      ASSERT_TRUE(mesh.has_normals());
      std::vector<Vec3> sums(mesh.vertex_count());
      for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
        const Vec3 a = mesh.Corner(t, 0);
        const Vec3 n = Cross(mesh.Corner(t, 1) - a, mesh.Corner(t, 2) - a);
        for (int k = 0; k < 3; ++k) sums[mesh.Index(3 * t + k)] += n;
      }
      for (uint32_t i = 0; i < mesh.vertex_count(); ++i) {
        const Vec3 want = sums[i] * kNormalScale, got = mesh.VertexNormal(i);
        ASSERT_GT(Length(want), 0.0f);
        const double cosine = Dot(want, got) / (Length(want) * Length(got));
        max_angle = std::max(max_angle, std::acos(std::min(1.0, cosine)));
        max_rel = std::max(max_rel, double(Length(got - want) / Length(want)));
        ++vertices;
      }
    }
  std::printf("%zu vertices, max angle %.3g rad, max relative error %.3g\n", vertices, max_angle,
              max_rel);
  EXPECT_GT(vertices, 1000u);
  EXPECT_LT(max_angle, 2e-3);
  EXPECT_LT(max_rel, 2e-3);
}

TEST(MarchingCubesTest, HalfFloatsRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, -1023.5f})
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  EXPECT_EQ(HalfToFloat(FloatToHalf(1e6f)), 65504.0f);
  EXPECT_NEAR(HalfToFloat(FloatToHalf(0.1f)), 0.1f, 0.1f / 2048);
}

// A mesh of n vertices whose triangles use every vertex, the last one included. The vertices are
// collinear (the triangles are degenerate): only the indices matter here.
ChunkMesh FanMesh(uint32_t n) {
  ChunkMesh m;
  for (uint32_t i = 0; i < n; ++i) m.vertices.push_back({uint16_t(i), uint16_t(3 * i), 7});
  for (uint32_t i = 0; i + 2 < n; ++i) {
    m.AddTriangle(0, uint16_t(n - 1 - i), uint16_t(i + 1));
  }
  return m;
}

TEST(ChunkMeshTest, IndicesNarrowToOneByteExactlyWhenEveryVertexFits) {
  for (const uint32_t n : {3u, 100u, 256u, 257u, 600u}) {
    SCOPED_TRACE(n);
    ChunkMesh m = FanMesh(n);
    std::vector<uint16_t> built;  // as FanMesh added them
    for (uint32_t i = 0; i + 2 < n; ++i)
      built.insert(built.end(), {0, uint16_t(n - 1 - i), uint16_t(i + 1)});
    ASSERT_FALSE(m.narrow());
    for (size_t i = 0; i < built.size(); ++i) ASSERT_EQ(m.Index(i), built[i]) << i;
    const size_t bytes = m.DataBytes();
    EXPECT_EQ(m.IndexBytes(), 2 * built.size());
    m.NarrowIndices();
    const bool fits = n <= 256;
    EXPECT_EQ(m.narrow(), fits);
    EXPECT_EQ(m.IndexBytes(), fits ? built.size() : 2 * built.size());
    EXPECT_EQ(m.DataBytes(), fits ? bytes - built.size() : bytes);
    ASSERT_EQ(m.triangle_count(), built.size() / 3);
    for (size_t i = 0; i < built.size(); ++i) ASSERT_EQ(m.Index(i), built[i]) << i;
    for (uint32_t t = 0; t < m.triangle_count(); ++t) {
      const std::array<uint32_t, 3> ix = m.TriangleIndices(t);
      ASSERT_EQ(ix, (std::array<uint32_t, 3>{built[3 * t], built[3 * t + 1], built[3 * t + 2]}));
    }
    std::vector<uint32_t> seen;  // what WithIndices hands a loop, const (readers) or not (reorder)
    std::as_const(m).WithIndices([&](const auto* p) { seen.assign(p, p + built.size()); });
    EXPECT_TRUE(std::equal(seen.begin(), seen.end(), built.begin()));
    seen.clear();
    m.WithIndices([&](auto* p) { seen.assign(p, p + built.size()); });
    EXPECT_TRUE(std::equal(seen.begin(), seen.end(), built.begin()));
  }
  ChunkMesh empty;
  empty.NarrowIndices();
  EXPECT_TRUE(empty.empty());
}

TEST(MarchingCubesTest, UniformChunksHaveNoTriangles) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) { return Voxel{kMaterialRock, 255}; });
  EXPECT_TRUE(MeshChunk(*world, {0, 0, 0}).empty());
  auto water = testing::MakeFunctionWorld([](const Int3& v) {
    return v.y < 0 ? Voxel{kMaterialWater, 255} : Voxel{};
  });
  EXPECT_TRUE(MeshChunk(*water, {0, -1, 0}).empty()) << "water is not meshed for collision";
}

// solid_cells against a brute-force oracle: a cell is solid exactly when its eight corner voxels
// (read one by one from the world, outside the world as air) are inside (IsSolid). The random
// world has every corner configuration; the rock world has whole solid chunks (the mesher's
// early-out when no cell is crossed).
void ExpectSolidCellsMatchCorners(const World& world) {
  size_t solid = 0, cells = 0;
  const IntBox range = MeshedChunkRange(world);
  for (int32_t y = range.min.y; y < range.max.y; ++y)
    for (int32_t z = range.min.z; z < range.max.z; ++z)
      for (int32_t x = range.min.x; x < range.max.x; ++x) {
        const ChunkKey key{x, y, z};
        SolidCells solid_cells;
        MeshChunk(world, key, &solid_cells);
        for (int c = 0; c < kChunkVoxels; ++c) {
          const Int3 local{c & 7, (c >> 6) & 7, (c >> 3) & 7};
          const Int3 low = ChunkOrigin(key) + local;
          bool inside = true;
          for (int k = 0; k < 8; ++k) {
            const Int3 v = low + Int3{k & 1, (k >> 1) & 1, k >> 2};
            inside &= world.voxel_bounds().Contains(v) && IsSolid(world.GetVoxel(v));
          }
          const bool bit = (solid_cells[local.y] >> (local.x | local.z << 3) & 1) != 0;
          ASSERT_EQ(bit, inside) << "chunk " << x << "," << y << "," << z << " cell " << local.x
                                 << "," << local.y << "," << local.z;
          solid += inside;
          ++cells;
        }
      }
  EXPECT_GT(solid, 0u);
  EXPECT_LT(solid, cells);
}

TEST(MarchingCubesTest, SolidCellsAreTheCellsWithEveryCornerInside) {
  ExpectSolidCellsMatchCorners(*testing::MakeFunctionWorld(
      [](const Int3& v) {
        uint32_t h =
            uint32_t(v.x) * 73856093u ^ uint32_t(v.y) * 19349663u ^ uint32_t(v.z) * 83492791u;
        h = (h ^ (h >> 13)) * 0x5bd1e995u;
        // Mostly solid, so that cells with all eight corners inside are common.
        return Voxel{uint8_t(h % 5 == 0 ? kMaterialWater : 2 + (h >> 8) % 3),
                     uint8_t(h % 7 == 0 ? 100 : 200)};
      },
      {24, 24, 24}, 1.0f));
  ExpectSolidCellsMatchCorners(*testing::MakeFunctionWorld(
      [](const Int3& v) {
        return v.y < 3 ? Voxel{kMaterialRock, 255} : Voxel{};
      },
      {24, 24, 24}, 1.0f));
}

}  // namespace
}  // namespace voxcol
