// Whole-world smooth raycasts on the default cave world (512x192x512 voxels, seed 1), the workload
// of issue 15: random origins anywhere in the world box, uniform directions, 8/64/512 world units.
//
// - BM_WorldRaycast: voxcol's query entry point (Raycast(), what the server's query engine calls)
//   over a BroadphaseIndex and a ChunkCollisionCache, warm (one pass over the same rays first).
// - BM_EmbreeWorldRaycast / BM_BulletWorldRaycast: the same rays against ONE Embree scene and ONE
//   Bullet collision world holding the triangles of EVERY meshed chunk of the world (the whole
//   world is meshed once per process, on two threads, with the mesher the cache uses).
// - BM_ColdChunkPipeline, BM_ColdWorldRaycast, BM_ColdWorldPass: the same work on fresh worlds,
//   where every chunk must be generated, meshed and indexed first.
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <benchmark/benchmark.h>
#include <btBulletCollisionCommon.h>

#include <memory>
#include <vector>

#include "tests/bench/bullet_mesh.h"
#include "tests/bench/world_embree.h"
#include "tests/bench/world_scenes.h"

namespace voxcol::bench {
namespace {

void SetRayCounters(benchmark::State& state, size_t hits) {
  const double n = double(state.iterations());
  state.SetItemsProcessed(state.iterations());
  state.counters["rays_per_second"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["hit_fraction"] = double(hits) / n;
}

void BM_WorldRaycast(benchmark::State& state) {
  WorldQueries& q = SharedDefaultWorld();
  const std::vector<RaycastInput>& rays = BenchWorldRays(int(state.range(0)));
  const RaycastSettings settings;  // smooth, water passed through: the server's defaults
  for (const RaycastInput& r : rays) Raycast(*q.index, *q.cache, r, settings);  // warm-up pass
  QueryStats stats;
  size_t i = 0, hits = 0, inside = 0;
  for (auto _ : state) {
    RaycastHit hit = Raycast(*q.index, *q.cache, rays[i], settings, &stats);
    hits += hit.hit;
    inside += hit.started_inside;
    benchmark::DoNotOptimize(hit);
    if (++i == rays.size()) i = 0;
  }
  SetRayCounters(state, hits);
  const double n = double(state.iterations());
  state.counters["chunks_per_ray"] = double(stats.chunks_visited) / n;
  state.counters["nodes_per_ray"] = double(stats.tree_nodes_visited) / n;
  state.counters["triangles_per_ray"] = double(stats.triangles_tested) / n;
  state.counters["inside_fraction"] = double(inside) / n;
  state.counters["cache_builds"] = double(stats.cache_builds);  // 0 when the cache holds the set
}
BENCHMARK(BM_WorldRaycast)->Arg(8)->Arg(64)->Arg(512);

const EmbreeWorld& SharedEmbreeWorld() {
  static EmbreeWorld scene(SharedWorldMeshes());
  return scene;
}

void BM_EmbreeWorldRaycast(benchmark::State& state) {
  const EmbreeWorld& scene = SharedEmbreeWorld();
  const std::vector<RaycastInput>& rays = BenchWorldRays(int(state.range(0)));
  for (const RaycastInput& r : rays) benchmark::DoNotOptimize(scene.Closest(r));  // warm-up
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += scene.Closest(rays[i]) >= 0;
    if (++i == rays.size()) i = 0;
  }
  SetRayCounters(state, hits);
  state.counters["scene_triangles"] = double(SharedWorldMeshes().triangles);
}
BENCHMARK(BM_EmbreeWorldRaycast)->Arg(8)->Arg(64)->Arg(512);

// One btCollisionWorld (dbvt broadphase) with one static collision object per meshed chunk, each a
// quantized btBvhTriangleMeshShape over the chunk's triangles: how a Bullet user holds chunked
// terrain. Queries go through btCollisionWorld::rayTest with the closest-hit callback.
struct BulletWorld {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btCollisionWorld world{&dispatcher, &broadphase, &config};
  std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
  std::vector<std::unique_ptr<btBvhTriangleMeshShape>> shapes;
  std::vector<std::unique_ptr<btCollisionObject>> objects;

  explicit BulletWorld(const WorldMeshes& m) {
    for (size_t c = 0; c < m.meshes.size(); ++c) {
      arrays.push_back(BulletMesh(m.meshes[c], m.float_vertices[c]));
      shapes.push_back(std::make_unique<btBvhTriangleMeshShape>(arrays.back().get(), true));
      objects.push_back(std::make_unique<btCollisionObject>());
      objects.back()->setCollisionShape(shapes.back().get());
      objects.back()->setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
      world.addCollisionObject(objects.back().get(), btBroadphaseProxy::StaticFilter,
                               btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
    }
    world.updateAabbs();
  }
  ~BulletWorld() {
    for (auto& o : objects) world.removeCollisionObject(o.get());
  }

  // Closest hit distance along the normalized direction, or negative on a miss.
  float Closest(const RaycastInput& r) const {
    const Vec3 d = Normalize(r.direction);
    const Vec3 to = r.origin + d * r.max_distance;
    btVector3 from(r.origin.x, r.origin.y, r.origin.z), target(to.x, to.y, to.z);
    btCollisionWorld::ClosestRayResultCallback cb(from, target);
    world.rayTest(from, target, cb);
    return cb.hasHit() ? cb.m_closestHitFraction * r.max_distance : -1.0f;
  }
};

const BulletWorld& SharedBulletWorld() {
  static BulletWorld* world = new BulletWorld(SharedWorldMeshes());  // never freed: process-long
  return *world;
}

void BM_BulletWorldRaycast(benchmark::State& state) {
  const BulletWorld& world = SharedBulletWorld();
  const std::vector<RaycastInput>& rays = BenchWorldRays(int(state.range(0)));
  for (const RaycastInput& r : rays) benchmark::DoNotOptimize(world.Closest(r));  // warm-up
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += world.Closest(rays[i]) >= 0;
    if (++i == rays.size()) i = 0;
  }
  SetRayCounters(state, hits);
}
BENCHMARK(BM_BulletWorldRaycast)->Arg(8)->Arg(64)->Arg(512);

}  // namespace
}  // namespace voxcol::bench
