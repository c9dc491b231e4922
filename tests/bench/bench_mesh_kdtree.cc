// Marching cubes, loose kD-tree build and closest-hit raycasts on the chunk meshes of the default
// cave world, side by side with Bullet's quantized BVH (btBvhTriangleMeshShape) and Embree 3
// (rtcIntersect1) on the same triangles and the same rays.
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <benchmark/benchmark.h>
#include <btBulletCollisionCommon.h>
#include <embree3/rtcore.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/kdtree/kd_tree.h"
#include "core/mesh/marching_cubes.h"
#include "tests/bench/bullet_mesh.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

using bench::BulletMesh;

// The meshed chunks of a 128x96x128-voxel block of the default cave world (seed 1, default
// size), and rays aimed at random surface points of each chunk.
struct Scene {
  std::unique_ptr<World> world;
  std::vector<ChunkKey> keys;        // non-empty chunks
  std::vector<MeshSources> sources;  // their voxels, fetched once
  std::vector<ChunkMesh> meshes;     // in the trees' leaf order (KdTree::Build reorders them)
  std::vector<ChunkMesh> stored;     // the same with their indices as the cache stores them
  std::vector<ChunkMesh> as_meshed;  // in marching-cubes order, the input of BM_KdTreeBuild
  std::vector<std::vector<Vec3>> float_vertices;  // decoded, for the peers (they need floats)
  std::vector<KdTree> trees;
  size_t triangles = 0;
  struct Ray {
    uint32_t chunk;
    Vec3 origin, dir;  // dir unit length
    float max_t;
  };
  std::vector<Ray> rays;
};

const Scene& GetScene() {
  static const Scene* scene = [] {
    auto* s = new Scene;
    s->world = testing::MakeCaveWorld(1, WorldConfig{}.size_voxels);
    // Every source resident, so that BM_MarchingCubesChunk times the mesher alone (with
    // neighbours that are the generator's, MeshChunk would generate the shell voxels it reads).
    for (int y = -7; y <= 6; ++y)
      for (int z = -9; z <= 8; ++z)
        for (int x = -9; x <= 8; ++x) s->world->GetChunk({x, y, z});
    for (int y = -6; y < 6; ++y)
      for (int z = -8; z < 8; ++z)
        for (int x = -8; x < 8; ++x) {
          MeshSources src = GatherMeshSources(*s->world, {x, y, z});
          if (src.generator_parts != 0) std::abort();  // a neighbour was not resident
          ChunkMesh mesh;
          MeshChunk(src, {x, y, z}, 1.0f, &mesh);
          if (mesh.empty()) continue;
          s->keys.push_back({x, y, z});
          s->sources.push_back(src);
          s->triangles += mesh.triangle_count();
          std::vector<Vec3> decoded;
          for (uint32_t i = 0; i < mesh.vertex_count(); ++i) decoded.push_back(mesh.Vertex(i));
          s->float_vertices.push_back(std::move(decoded));
          s->as_meshed.push_back(mesh);
          s->meshes.push_back(std::move(mesh));
          s->trees.emplace_back().Build(&s->meshes.back());  // leaf order, as the cache keeps it
          s->stored.push_back(s->meshes.back());
          s->stored.back().NarrowIndices();  // one byte per index where they fit, as the cache
        }
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(0, 1), off(-4, 4);
    for (int i = 0; i < 1 << 16; ++i) {
      uint32_t c = rng() % s->meshes.size();
      const ChunkMesh& m = s->meshes[c];
      uint32_t t = rng() % m.triangle_count();
      float a = u(rng), b = u(rng);
      if (a + b > 1) a = 1 - a, b = 1 - b;
      Vec3 target = m.Corner(t, 0) + (m.Corner(t, 1) - m.Corner(t, 0)) * a +
                    (m.Corner(t, 2) - m.Corner(t, 0)) * b;
      Vec3 origin = s->trees[c].bounds(m).Center() + Vec3(off(rng), off(rng), off(rng));
      Vec3 d = target - origin;
      if (LengthSq(d) < 1e-6f) continue;
      s->rays.push_back({c, origin, Normalize(d), Length(d) * 1.5f});
    }
    // Rays grouped by chunk, as a chunk walk issues them: the chunk's data is warm after the first
    // ray, so the benchmark measures traversal rather than memory latency.
    std::stable_sort(s->rays.begin(), s->rays.end(),
                     [](const Scene::Ray& a, const Scene::Ray& b) { return a.chunk < b.chunk; });
    return s;
  }();
  return *scene;
}

// The meshes as the cache stores them.
double MeshBytesPerTriangle(const Scene& s) {
  size_t bytes = 0;
  for (const ChunkMesh& m : s.stored) bytes += m.DataBytes();
  return double(bytes) / double(s.triangles);
}

// The mesh Bullet needs: float vertices and 16-bit indices (materials not counted).
double FloatMeshBytesPerTriangle(const Scene& s) {
  size_t bytes = 0;
  for (size_t c = 0; c < s.meshes.size(); ++c) {
    bytes += s.float_vertices[c].size() * sizeof(Vec3) +
             size_t(s.meshes[c].triangle_count()) * 3 * sizeof(uint16_t);
  }
  return double(bytes) / double(s.triangles);
}

void BM_MarchingCubesChunk(benchmark::State& state) {
  const Scene& s = GetScene();
  ChunkMesh mesh;
  size_t i = 0, triangles = 0;
  for (auto _ : state) {
    size_t c = i++ % s.keys.size();
    MeshChunk(s.sources[c], s.keys[c], 1.0f, &mesh);
    triangles += mesh.triangle_count();
    benchmark::DoNotOptimize(mesh.vertices.data());  // 16-bit vertices, as the cache stores them
  }
  state.SetItemsProcessed(int64_t(triangles));  // triangles per second
  state.counters["triangles_per_chunk"] = double(triangles) / double(state.iterations());
  state.counters["scene_chunks"] = double(s.meshes.size());
  state.counters["scene_rays"] = double(s.rays.size());
}
BENCHMARK(BM_MarchingCubesChunk);

void BM_KdTreeBuild(benchmark::State& state) {
  const Scene& s = GetScene();
  KdBuildScratch scratch;
  // Build reorders the mesh's triangles, so each build copies a chunk's marching-cubes output
  // into `mesh` first, as the cache copies it from its meshing scratch.
  ChunkMesh mesh;
  size_t i = 0, triangles = 0, node_bytes = 0;
  for (auto _ : state) {
    const ChunkMesh& from = s.as_meshed[i++ % s.as_meshed.size()];
    mesh = from;  // as the cache copies it (the narrowed index array is reallocated each time)
    KdTree tree;  // a fresh tree per chunk, as the cache does
    tree.Build(&mesh, &scratch);
    mesh.NarrowIndices();  // as the cache stores it
    triangles += mesh.triangle_count();
    benchmark::DoNotOptimize(tree.nodes().data());
  }
  for (const KdTree& t : s.trees) node_bytes += t.DataBytes();
  state.SetItemsProcessed(int64_t(triangles));
  state.counters["bytes_per_triangle"] =
      MeshBytesPerTriangle(s) + double(node_bytes) / double(s.triangles);
  state.counters["tree_bytes_per_triangle"] = double(node_bytes) / double(s.triangles);
}
BENCHMARK(BM_KdTreeBuild);

size_t BulletBvhBytes(btBvhTriangleMeshShape& shape) {
  btOptimizedBvh* bvh = shape.getOptimizedBvh();
  return size_t(bvh->getQuantizedNodeArray().size()) * sizeof(btQuantizedBvhNode) +
         size_t(bvh->getSubtreeInfoArray().size()) * sizeof(btBvhSubtreeInfo);
}

void BM_BulletBvhBuildQuantized(benchmark::State& state) {
  const Scene& s = GetScene();
  std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
  for (size_t c = 0; c < s.meshes.size(); ++c)
    arrays.push_back(BulletMesh(s.meshes[c], s.float_vertices[c]));
  size_t i = 0, triangles = 0, bvh_bytes = 0;
  for (auto _ : state) {
    size_t c = i++ % s.meshes.size();
    btBvhTriangleMeshShape shape(arrays[c].get(), /*useQuantizedAabbCompression=*/true);
    triangles += s.meshes[c].triangle_count();
    benchmark::DoNotOptimize(shape.getOptimizedBvh());
  }
  for (auto& a : arrays) {
    btBvhTriangleMeshShape shape(a.get(), true);
    bvh_bytes += BulletBvhBytes(shape);
  }
  state.SetItemsProcessed(int64_t(triangles));
  state.counters["bytes_per_triangle"] =
      FloatMeshBytesPerTriangle(s) + double(bvh_bytes) / double(s.triangles);
  state.counters["tree_bytes_per_triangle"] = double(bvh_bytes) / double(s.triangles);
}
BENCHMARK(BM_BulletBvhBuildQuantized);

void BM_KdTreeRaycast(benchmark::State& state) {
  const Scene& s = GetScene();
  size_t i = 0, hits = 0;
  KdStats stats;
  for (auto _ : state) {
    const Scene::Ray& r = s.rays[i++ % s.rays.size()];
    ClosestHitCollector closest(r.max_t);
    s.trees[r.chunk].CastRay(s.stored[r.chunk], KdRay(r.origin, r.dir), closest, &stats);
    hits += closest.has_hit();
    benchmark::DoNotOptimize(closest);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  state.counters["nodes_per_ray"] = double(stats.nodes_visited) / double(state.iterations());
  state.counters["triangles_per_ray"] = double(stats.triangles_tested) / double(state.iterations());
}
BENCHMARK(BM_KdTreeRaycast);

// Closest hit: report the fraction so Bullet keeps the nearest one.
struct BulletClosest : btTriangleRaycastCallback {
  using btTriangleRaycastCallback::btTriangleRaycastCallback;
  bool hit = false;
  btScalar reportHit(const btVector3&, btScalar fraction, int, int) override {
    hit = true;
    return fraction;
  }
};

void BM_BulletRaycast(benchmark::State& state) {
  const Scene& s = GetScene();
  std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
  std::vector<std::unique_ptr<btBvhTriangleMeshShape>> shapes;
  for (size_t c = 0; c < s.meshes.size(); ++c) {
    arrays.push_back(BulletMesh(s.meshes[c], s.float_vertices[c]));
    shapes.push_back(std::make_unique<btBvhTriangleMeshShape>(arrays.back().get(), true));
  }
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const Scene::Ray& r = s.rays[i++ % s.rays.size()];
    Vec3 to = r.origin + r.dir * r.max_t;
    btVector3 from(r.origin.x, r.origin.y, r.origin.z), target(to.x, to.y, to.z);
    BulletClosest cb(from, target);
    shapes[r.chunk]->performRaycast(&cb, from, target);
    hits += cb.hit;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
}
BENCHMARK(BM_BulletRaycast);

void BM_EmbreeRaycast(benchmark::State& state) {
  const Scene& s = GetScene();
  RTCDevice device = rtcNewDevice("threads=1");
  std::vector<RTCScene> scenes;
  for (size_t c = 0; c < s.meshes.size(); ++c) {
    const ChunkMesh& m = s.meshes[c];
    const std::vector<Vec3>& fv = s.float_vertices[c];
    RTCScene scene = rtcNewScene(device);
    RTCGeometry g = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(
        g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), fv.size()));
    std::memcpy(v, fv.data(), fv.size() * sizeof(Vec3));
    auto* idx = static_cast<uint32_t*>(rtcSetNewGeometryBuffer(
        g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(uint32_t), m.triangle_count()));
    for (uint32_t i = 0; i < 3 * m.triangle_count(); ++i) idx[i] = m.Index(i);
    rtcCommitGeometry(g);
    rtcAttachGeometry(scene, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(scene);
    scenes.push_back(scene);
  }
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const Scene::Ray& r = s.rays[i++ % s.rays.size()];
    RTCRayHit rh;
    rh.ray = {r.origin.x, r.origin.y, r.origin.z, 0.0f, r.dir.x, r.dir.y,
              r.dir.z,    0.0f,       r.max_t,    ~0u,  0,       0};
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scenes[r.chunk], &context, &rh);
    hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  for (RTCScene scene : scenes) rtcReleaseScene(scene);
  rtcReleaseDevice(device);
}
BENCHMARK(BM_EmbreeRaycast);

}  // namespace
}  // namespace voxcol
