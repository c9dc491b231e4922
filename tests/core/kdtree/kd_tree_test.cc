#include "core/kdtree/kd_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/mesh/marching_cubes.h"
#include "core/voxel/edit.h"
#include "tests/core/test_meshes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr int kQueriesPerWorld = 10000;

struct ChunkCase {
  ChunkKey key;
  ChunkMesh mesh;
  KdTree tree;
};

// Meshes and builds every non-empty chunk of the world; with `narrow`, then stores the indices of
// each mesh that allows it in one byte, as the collision cache does.
std::vector<ChunkCase> BuildAll(const World& world, bool narrow = false) {
  std::vector<ChunkCase> out;
  IntBox range = MeshedChunkRange(world);
  KdBuildScratch scratch;
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int x = range.min.x; x < range.max.x; ++x) {
        ChunkCase c{{x, y, z}, MeshChunk(world, {x, y, z}), {}};
        if (c.mesh.empty()) continue;
        c.tree.Build(&c.mesh, &scratch);
        if (narrow) c.mesh.NarrowIndices();
        out.push_back(std::move(c));
      }
  return out;
}

// Brute force: the nearest hit over all triangles with the same triangle test.
ClosestHitCollector BruteClosest(const ChunkMesh& mesh, const KdRay& ray, float max_t) {
  ClosestHitCollector best(max_t);
  for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
    float hit_t;
    if (IntersectRayTriangle(ray.watertight, mesh.Corner(t, 0), mesh.Corner(t, 1),
                             mesh.Corner(t, 2), best.early_out(), &hit_t) &&
        hit_t >= ray.t_min) {
      best.AddHit({hit_t, t});
    }
  }
  return best;
}

std::vector<uint32_t> BruteAllHits(const ChunkMesh& mesh, const KdRay& ray, float max_t) {
  std::vector<uint32_t> out;
  for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
    float hit_t;
    if (IntersectRayTriangle(ray.watertight, mesh.Corner(t, 0), mesh.Corner(t, 1),
                             mesh.Corner(t, 2), max_t, &hit_t) &&
        hit_t >= ray.t_min) {
      out.push_back(t);
    }
  }
  return out;
}

std::vector<uint32_t> BruteAabb(const ChunkMesh& mesh, const Aabb& box) {
  std::vector<uint32_t> out;
  for (uint32_t t = 0; t < mesh.triangle_count(); ++t) {
    if (TriangleBounds(mesh, t).Overlaps(box)) out.push_back(t);
  }
  return out;
}

Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> n;
  Vec3 v;
  do v = Vec3(n(rng), n(rng), n(rng));
  while (LengthSq(v) < 1e-6f);
  // One ray in eight is axis-aligned: exercises the parallel-to-slab path.
  if (rng() % 8 == 0) {
    int a = rng() % 3;
    Vec3 axis;
    axis[a] = v[a] < 0 ? -1.0f : 1.0f;
    return axis;
  }
  return Normalize(v);
}

// A point on a random triangle; sometimes exactly a vertex or on an edge.
Vec3 PointOnTriangle(std::mt19937& rng, const ChunkMesh& mesh) {
  uint32_t t = rng() % mesh.triangle_count();
  std::uniform_real_distribution<float> u(0, 1);
  float a = u(rng), b = u(rng);
  if (a + b > 1) a = 1 - a, b = 1 - b;
  switch (rng() % 6) {
    case 0:
      return mesh.Corner(t, rng() % 3);
    case 1:
      b = 0;
      break;
    default:
      break;
  }
  return mesh.Corner(t, 0) + (mesh.Corner(t, 1) - mesh.Corner(t, 0)) * a +
         (mesh.Corner(t, 2) - mesh.Corner(t, 0)) * b;
}

struct QueryTally {
  int hits = 0, misses = 0, boxes_nonempty = 0;
};

// One random ray (closest, any, all) and one random box against tree and brute force.
void CheckRandomQuery(std::mt19937& rng, const ChunkCase& c, QueryTally* tally) {
  std::uniform_real_distribution<float> u(-4, 12), len(0.1f, 20.0f), ext(0, 3);
  Vec3 lo = c.tree.bounds(c.mesh).min;
  Vec3 origin = lo + Vec3(u(rng), u(rng), u(rng));
  Vec3 dir = RandomUnit(rng);
  float max_t = len(rng);
  if (rng() % 2) {  // aim at the surface
    Vec3 target = PointOnTriangle(rng, c.mesh);
    dir = target - origin;
    if (LengthSq(dir) < 1e-8f) dir = RandomUnit(rng);
    max_t = Length(dir) * 1.5f;
    dir = Normalize(dir);
  }
  // Directions need not be unit length (t counts multiples of it), and t_min may be positive;
  // one ray in eight has a component tiny enough to stress the slab arithmetic.
  switch (rng() % 8) {
    case 0:
      dir[rng() % 3] = 1e-7f;
      break;
    case 1:
      dir = dir * 1e-3f, max_t *= 1e3f;
      break;
    case 2:
      dir = dir * 1e3f, max_t *= 1e-3f;
      break;
    default:
      break;
  }
  std::uniform_real_distribution<float> start(0, 0.5f);
  const float t_min = rng() % 4 == 0 ? max_t * start(rng) : 0;
  KdRay ray(origin, dir, t_min);
  ClosestHitCollector brute = BruteClosest(c.mesh, ray, max_t);
  ClosestHitCollector closest(max_t);
  c.tree.CastRay(c.mesh, ray, closest, nullptr);
  ASSERT_EQ(closest.has_hit(), brute.has_hit());
  if (brute.has_hit()) {
    ++tally->hits;
    EXPECT_NEAR(closest.hit().t, brute.hit().t, 1e-5f * brute.hit().t);
  } else {
    ++tally->misses;
  }
  AnyHitCollector any(max_t);
  c.tree.CastRay(c.mesh, ray, any, nullptr);
  EXPECT_EQ(any.has_hit(), brute.has_hit());
  std::vector<TriangleRayHit> all;
  AllHitsCollector all_collector(max_t, &all);
  c.tree.CastRay(c.mesh, ray, all_collector, nullptr);
  std::vector<uint32_t> all_tris;
  for (const TriangleRayHit& h : all) all_tris.push_back(h.triangle);
  std::sort(all_tris.begin(), all_tris.end());
  EXPECT_EQ(all_tris, BruteAllHits(c.mesh, ray, max_t));

  Vec3 center = lo + Vec3(u(rng), u(rng), u(rng)), half(ext(rng), ext(rng), ext(rng));
  if (rng() % 2) center = PointOnTriangle(rng, c.mesh) + Vec3(u(rng), u(rng), u(rng)) * 0.25f;
  if (rng() % 8 == 0) half = Vec3();  // a point
  Aabb box{center - half, center + half};
  std::vector<uint32_t> found;
  AllTrianglesCollector collector(&found);
  c.tree.CollideAabb(c.mesh, box, collector, nullptr);
  std::sort(found.begin(), found.end());
  std::vector<uint32_t> expected = BruteAabb(c.mesh, box);
  EXPECT_EQ(found, expected);
  tally->boxes_nonempty += !expected.empty();
}

void CheckChunks(const std::vector<ChunkCase>& chunks, uint32_t seed) {
  for (const ChunkCase& c : chunks) ASSERT_TRUE(c.tree.Validate(c.mesh));
  std::mt19937 rng(seed);
  QueryTally tally;
  const bool failed_before = ::testing::Test::HasFailure();
  for (int i = 0; i < kQueriesPerWorld; ++i) {
    if (::testing::Test::HasFailure() && !failed_before) break;  // one report, not 10,000
    CheckRandomQuery(rng, chunks[rng() % chunks.size()], &tally);
  }
  std::printf("%zu chunks: %d hits, %d misses, %d non-empty boxes\n", chunks.size(), tally.hits,
              tally.misses, tally.boxes_nonempty);
  // The query mix must exercise both outcomes substantially.
  EXPECT_GT(tally.hits, kQueriesPerWorld / 4);
  EXPECT_GT(tally.misses, kQueriesPerWorld / 10);
  EXPECT_GT(tally.boxes_nonempty, kQueriesPerWorld / 4);
}

// Random rays and boxes on every chunk's tree against brute force over its triangles: with the
// 16-bit indices as built and with the one-byte ones of the cache (each traversal reads its own).
void CheckWorld(const World& world, uint32_t seed) {
  for (const bool narrow : {false, true}) {
    SCOPED_TRACE(narrow ? "one-byte indices" : "16-bit indices");
    std::vector<ChunkCase> chunks = BuildAll(world, narrow);
    ASSERT_FALSE(chunks.empty());
    size_t narrowed = 0;
    for (const ChunkCase& c : chunks) narrowed += c.mesh.narrow();
    EXPECT_EQ(narrowed > 0, narrow);
    CheckChunks(chunks, seed);
  }
}

void RandomEdits(World& world, uint32_t seed, float extent) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-extent, extent), ur(1.5f, 5.0f);
  for (int i = 0; i < 30; ++i) {
    FillBallParams p{{u(rng), u(rng), u(rng)},
                     ur(rng),
                     uint8_t(2 + i % 4),
                     i % 2 ? EditMode::kAdd : EditMode::kSubtract};
    ASSERT_TRUE(world.Edit([&](ChunkEdit& e) { return FillBall(e, p, EditLimits{}); }).ok());
  }
}

TEST(KdTreeTest, CaveWorldQueriesEqualBruteForceBeforeAndAfterEdits) {
  auto world = testing::MakeCaveWorld(21, {48, 64, 48});
  CheckWorld(*world, 1);
  RandomEdits(*world, 2, 20);
  CheckWorld(*world, 3);
}

TEST(KdTreeTest, BallWorldQueriesEqualBruteForceBeforeAndAfterEdits) {
  auto world = testing::MakeFunctionWorld(
      [](const Int3& v) {
        float d = Length(Vec3(v.x + 0.5f, v.y + 0.5f, v.z + 0.5f)) - 10.0f;
        return Voxel{kMaterialRock, uint8_t(std::lround(std::clamp(0.5f - d, 0.0f, 1.0f) * 255))};
      },
      {32, 32, 32});
  CheckWorld(*world, 4);
  RandomEdits(*world, 5, 12);
  CheckWorld(*world, 6);
}

// Trees of 1..12 triangles: a root whose only child is a leaf, nodes that split straight into
// leaves, partly filled nodes. Each equals brute force.
TEST(KdTreeTest, SmallMeshesEqualBruteForce) {
  auto world = testing::MakeCaveWorld(23, {48, 64, 48});
  std::vector<ChunkCase> chunks = BuildAll(*world);
  ASSERT_FALSE(chunks.empty());
  const ChunkCase* big = &chunks[0];
  for (const ChunkCase& c : chunks) {
    if (c.mesh.triangle_count() > big->mesh.triangle_count()) big = &c;
  }
  ASSERT_GE(big->mesh.triangle_count(), 12u);
  std::mt19937 rng(7);
  QueryTally tally;
  for (uint32_t n = 1; n <= 12; ++n) {
    ChunkCase c{big->key, {}, {}};
    c.mesh.origin = big->mesh.origin;
    c.mesh.voxel_size = big->mesh.voxel_size;
    c.mesh.vertices = big->mesh.vertices;
    for (uint32_t t = 0; t < n; ++t) {
      const std::array<uint32_t, 3> ix = big->mesh.TriangleIndices(t);
      c.mesh.AddTriangle(uint16_t(ix[0]), uint16_t(ix[1]), uint16_t(ix[2]));
    }
    for (uint32_t t = 0; t < n; ++t) c.mesh.materials.push_back(big->mesh.Material(t));
    c.tree.Build(&c.mesh);
    ASSERT_TRUE(c.tree.Validate(c.mesh)) << n << " triangles";
    for (int i = 0; i < 300; ++i) CheckRandomQuery(rng, c, &tally);
  }
  std::printf("%d hits, %d misses, %d non-empty boxes\n", tally.hits, tally.misses,
              tally.boxes_nonempty);
  EXPECT_GT(tally.hits, 12 * 300 / 4);
  EXPECT_GT(tally.boxes_nonempty, 12 * 300 / 10);
}

TEST(KdTreeTest, EmptyMeshGivesEmptyTreeAndNoHits) {
  ChunkMesh mesh;
  KdTree tree;
  tree.Build(&mesh);
  EXPECT_TRUE(tree.empty());
  ClosestHitCollector closest(100);
  tree.CastRay(mesh, KdRay({0, 0, 0}, {1, 0, 0}), closest, nullptr);
  EXPECT_FALSE(closest.has_hit());
}

// Nodes are 40 bytes with up to four children each and leaves (ranges of up to four triangles)
// live inside their parent, so a tree needs about one node per eleven triangles: well under the
// 12 bytes per triangle of one 12-byte binary node per triangle. The depth stays within the bound
// the stacks assume.
TEST(KdTreeTest, TreeIsCompactAndHasBoundedDepth) {
  auto world = testing::MakeCaveWorld(22, {48, 64, 48});
  size_t bytes = 0, nodes = 0, triangles = 0;
  int depth = 0;
  for (const ChunkCase& c : BuildAll(*world)) {
    bytes += c.tree.DataBytes();
    nodes += c.tree.nodes().size();
    triangles += c.mesh.triangle_count();
    depth = std::max(depth, c.tree.depth());
  }
  std::printf(
      "%zu triangles, %zu nodes (%.3f per triangle), %.2f tree bytes per triangle, "
      "max depth %d\n",
      triangles, nodes, double(nodes) / double(triangles), double(bytes) / double(triangles),
      depth);
  EXPECT_LT(double(bytes) / double(triangles), 9.0);
  EXPECT_LE(depth, KdTree::kMaxDepth);
}

// Build permutes the mesh's triangles into leaf order and changes nothing else: the same
// vertices, normals and triangles (corners in the same rotation, with their materials), and
// indices in the form they came in (one byte or 16-bit).
TEST(KdTreeTest, BuildOnlyReordersTheMeshTriangles) {
  auto world = testing::MakeCaveWorld(23, {32, 48, 32});
  const IntBox range = MeshedChunkRange(*world);
  KdBuildScratch scratch;
  int meshes = 0, narrowed_meshes = 0;
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int x = range.min.x; x < range.max.x; ++x) {
        const ChunkMesh meshed = MeshChunk(*world, {x, y, z});
        if (meshed.empty()) continue;
        for (const bool narrow : {false, true}) {
          ChunkMesh mesh = meshed;
          if (narrow) mesh.NarrowIndices();
          const bool narrowed = mesh.narrow();
          KdTree tree;
          tree.Build(&mesh, &scratch);
          ASSERT_TRUE(tree.Validate(mesh));
          EXPECT_EQ(mesh.vertices, meshed.vertices);
          EXPECT_EQ(mesh.normals, meshed.normals);
          EXPECT_EQ(mesh.narrow(), narrowed);
          EXPECT_EQ(testing::SortedTriangles(mesh), testing::SortedTriangles(meshed));
          narrowed_meshes += narrowed;
        }
        ++meshes;
      }
  EXPECT_GT(meshes, 10);
  EXPECT_GT(narrowed_meshes, 10);
}

}  // namespace
}  // namespace voxcol
