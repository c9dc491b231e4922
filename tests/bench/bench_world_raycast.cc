// Whole-world smooth raycasts on the default cave world (512x192x512 voxels, seed 1), the workload
// of issue 15: random origins anywhere in the world box, uniform directions, 8/64/512 world units.
//
// - BM_WorldRaycast: voxcol's query entry point (Raycast(), what the server's query engine calls)
//   over a BroadphaseIndex and a ChunkCollisionCache, warm (two passes over the same rays first).
// - BM_EmbreeWorldRaycast / BM_BulletWorldRaycast: the same rays against ONE Embree scene and ONE
//   Bullet collision world holding the triangles of EVERY meshed chunk of the world (the whole
//   world is meshed once per process, on two threads, with the mesher the cache uses). The Bullet
//   world holds them in one BVH shape; BM_BulletWorldRaycastPerChunk in one object per chunk.
// - BM_WorldRaycastAir / BM_EmbreeWorldRaycastAir: only the rays that start in air, at every
//   length: the same question on both sides (the like-for-like figure).
// - BM_WorldRaycastSplit / BM_EmbreeWorldRaycastSplit: the 8-unit rays split into those that start
//   in air and those that start inside terrain, each also replayed hot (where the /8 gap lies).
// - BM_ColdChunkPipeline, BM_ColdWorldRaycast, BM_ColdWorldPass: the same work on fresh worlds,
//   where every chunk must be generated, meshed and indexed first.
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <benchmark/benchmark.h>
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
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

// Casts `rays` in turn through Raycast() (the caller warms up).
void TimeWorldRays(benchmark::State& state, WorldQueries& q, const std::vector<RaycastInput>& rays,
                   const RaycastSettings& settings) {
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

// Casts `rays` in turn into a peer's scene of the world's triangles (Embree or Bullet; its
// Closest() returns the hit distance, negative on a miss), after a warm-up pass over them.
template <typename PeerScene>
void TimePeerRays(benchmark::State& state, const PeerScene& scene,
                  const std::vector<RaycastInput>& rays) {
  for (const RaycastInput& r : rays) benchmark::DoNotOptimize(scene.Closest(r));  // warm-up
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += scene.Closest(rays[i]) >= 0;
    if (++i == rays.size()) i = 0;
  }
  SetRayCounters(state, hits);
}

void BM_WorldRaycast(benchmark::State& state) {
  WorldQueries& q = SharedDefaultWorld();
  const std::vector<RaycastInput>& rays = BenchWorldRays(int(state.range(0)));
  const RaycastSettings settings;  // smooth, water passed through: the server's defaults
  WarmRays(q, rays, settings);
  TimeWorldRays(state, q, rays, settings);
}
BENCHMARK(BM_WorldRaycast)->Arg(8)->Arg(64)->Arg(512);

const EmbreeWorld& SharedEmbreeWorld() {
  static EmbreeWorld scene(SharedWorldMeshes());
  return scene;
}

void BM_EmbreeWorldRaycast(benchmark::State& state) {
  const EmbreeWorld& scene = SharedEmbreeWorld();
  TimePeerRays(state, scene, BenchWorldRays(int(state.range(0))));
  state.counters["scene_triangles"] = double(SharedWorldMeshes().triangles);
  state.counters["scene_chunks"] = double(SharedWorldMeshes().meshes.size());
}
BENCHMARK(BM_EmbreeWorldRaycast)->Arg(8)->Arg(64)->Arg(512);

// The like-for-like whole-world figure (issue 39): only the rays that start in air, where both
// engines answer the same question (the closest crossing of the surface), at every length.
void BM_WorldRaycastAir(benchmark::State& state) {
  const std::vector<RaycastInput>& rays = SplitWorldRays(int(state.range(0)))[0];
  TimeWorldRays(state, SharedDefaultWorld(), rays, RaycastSettings{});
  state.counters["rays"] = double(rays.size());
}
BENCHMARK(BM_WorldRaycastAir)->Arg(8)->Arg(64)->Arg(512);

void BM_EmbreeWorldRaycastAir(benchmark::State& state) {
  const std::vector<RaycastInput>& rays = SplitWorldRays(int(state.range(0)))[0];
  TimePeerRays(state, SharedEmbreeWorld(), rays);
  state.counters["rays"] = double(rays.size());
}
BENCHMARK(BM_EmbreeWorldRaycastAir)->Arg(8)->Arg(64)->Arg(512);

// The 8-unit rays split by where they start, to locate the /8 gap: range(0) 0 = in air, 1 =
// inside terrain. range(1) 0 = every ray of the set in turn, as BM_WorldRaycast; n > 0 = the first
// n again and again, so that what they read stays in the processor's caches and their branches
// repeat (roughly the path's cost without memory misses).
std::vector<RaycastInput> SplitRaysFor(const benchmark::State& state) {
  std::vector<RaycastInput> rays = SplitWorldRays(8)[state.range(0) == 1 ? 1 : 0];
  if (state.range(1) > 0) rays.resize(std::min(rays.size(), size_t(state.range(1))));
  return rays;
}

void BM_WorldRaycastSplit(benchmark::State& state) {
  const std::vector<RaycastInput> rays = SplitRaysFor(state);
  TimeWorldRays(state, SharedDefaultWorld(), rays, RaycastSettings{});
  state.counters["rays"] = double(rays.size());
}
BENCHMARK(BM_WorldRaycastSplit)->ArgsProduct({{0, 1}, {0, 64}})->ArgNames({"inside", "hot"});

void BM_EmbreeWorldRaycastSplit(benchmark::State& state) {
  const std::vector<RaycastInput> rays = SplitRaysFor(state);
  TimePeerRays(state, SharedEmbreeWorld(), rays);
  state.counters["rays"] = double(rays.size());
}
BENCHMARK(BM_EmbreeWorldRaycastSplit)->ArgsProduct({{0, 1}, {0, 64}})->ArgNames({"inside", "hot"});

// How the Bullet peer holds the world's triangles; both are one btCollisionWorld (dbvt broadphase)
// of static objects with quantized btBvhTriangleMeshShapes, queried through rayTest with the
// closest-hit callback.
enum class BulletLayout {
  kObjectPerChunk,  // one object per meshed chunk: how a Bullet user holds editable chunked terrain
  kOneShape,        // one object, one BVH over every triangle (parts of 2^20 triangles, since the
                    // quantized node addresses at most 2^21 triangles in each of 1024 parts)
};

struct BulletWorld {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btCollisionWorld world{&dispatcher, &broadphase, &config};
  std::vector<Vec3> all_vertices;  // kOneShape: every chunk's float vertices, concatenated
  std::vector<int32_t> all_indices;
  std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
  std::vector<std::unique_ptr<btBvhTriangleMeshShape>> shapes;
  std::vector<std::unique_ptr<btCollisionObject>> objects;

  BulletWorld(const WorldMeshes& m, BulletLayout layout) {
    if (layout == BulletLayout::kOneShape) {
      AddObject(OneMesh(m));
    } else {
      for (size_t c = 0; c < m.meshes.size(); ++c)
        AddObject(BulletMesh(m.meshes[c], m.float_vertices[c]));
    }
    world.updateAabbs();
  }
  ~BulletWorld() {
    for (auto& o : objects) world.removeCollisionObject(o.get());
  }

  void AddObject(std::unique_ptr<btTriangleIndexVertexArray> array) {
    arrays.push_back(std::move(array));
    shapes.push_back(std::make_unique<btBvhTriangleMeshShape>(arrays.back().get(), true));
    objects.push_back(std::make_unique<btCollisionObject>());
    objects.back()->setCollisionShape(shapes.back().get());
    objects.back()->setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
    world.addCollisionObject(objects.back().get(), btBroadphaseProxy::StaticFilter,
                             btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
  }

  std::unique_ptr<btTriangleIndexVertexArray> OneMesh(const WorldMeshes& m) {
    for (size_t c = 0; c < m.meshes.size(); ++c) {
      const int32_t base = int32_t(all_vertices.size());
      all_vertices.insert(all_vertices.end(), m.float_vertices[c].begin(),
                          m.float_vertices[c].end());
      const ChunkMesh& mesh = m.meshes[c];
      for (uint32_t i = 0; i < 3 * mesh.triangle_count(); ++i) {
        all_indices.push_back(base + int32_t(mesh.Index(i)));
      }
    }
    constexpr size_t kPartTriangles = size_t(1) << 20;
    auto array = std::make_unique<btTriangleIndexVertexArray>();
    const size_t triangles = all_indices.size() / 3;
    for (size_t first = 0; first < triangles; first += kPartTriangles) {
      btIndexedMesh im;
      im.m_numTriangles = int(std::min(kPartTriangles, triangles - first));
      im.m_triangleIndexBase = reinterpret_cast<const unsigned char*>(&all_indices[3 * first]);
      im.m_triangleIndexStride = 3 * sizeof(int32_t);
      im.m_indexType = PHY_INTEGER;
      im.m_numVertices = int(all_vertices.size());
      im.m_vertexBase = reinterpret_cast<const unsigned char*>(all_vertices.data());
      im.m_vertexStride = sizeof(Vec3);
      im.m_vertexType = PHY_FLOAT;
      array->addIndexedMesh(im, PHY_INTEGER);
    }
    return array;
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

// Built once per layout, never freed (process-long).
const BulletWorld& SharedBulletWorld(BulletLayout layout) {
  static BulletWorld* per_chunk = nullptr;
  static BulletWorld* one_shape = nullptr;
  BulletWorld*& world = layout == BulletLayout::kOneShape ? one_shape : per_chunk;
  if (world == nullptr) world = new BulletWorld(SharedWorldMeshes(), layout);
  return *world;
}

void BulletWorldRaycast(benchmark::State& state, BulletLayout layout) {
  TimePeerRays(state, SharedBulletWorld(layout), BenchWorldRays(int(state.range(0))));
}

// The peer of record: one BVH over every triangle, like the one Embree scene (the faster layout
// by 1.9-3.6x on these rays).
void BM_BulletWorldRaycast(benchmark::State& state) {
  BulletWorldRaycast(state, BulletLayout::kOneShape);
}
BENCHMARK(BM_BulletWorldRaycast)->Arg(8)->Arg(64)->Arg(512);

void BM_BulletWorldRaycastPerChunk(benchmark::State& state) {
  BulletWorldRaycast(state, BulletLayout::kObjectPerChunk);
}
BENCHMARK(BM_BulletWorldRaycastPerChunk)->Arg(8)->Arg(64)->Arg(512);

// ---- Cold: fresh worlds, nothing generated, meshed or indexed yet ----

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Scheduler times of the calling thread (/proc/thread-self/schedstat): on a CPU, and runnable but
// waiting for one. Wall time minus both is time spent blocked (locks, waits).
struct ThreadTimes {
  double running = 0, queued = 0;  // seconds
};
ThreadTimes ThreadSchedstat() {
  std::ifstream f("/proc/thread-self/schedstat");
  uint64_t run_ns = 0, queued_ns = 0;
  f >> run_ns >> queued_ns;
  return {1e-9 * double(run_ns), 1e-9 * double(queued_ns)};
}

// Blocks of 8x8x8 chunks at the ground and in the caves below it (chunk y -6..1: voxel y -48..15),
// a different block per iteration, each on a fresh world. Every chunk of the block goes through
// the cache's build (voxels generated for it and its neighbours, marching cubes, kD-tree), as
// the first query to touch it would. The times are wall time of the builds alone (the fresh world
// is made and destroyed outside the timing).
void BM_ColdChunkPipeline(benchmark::State& state) {
  constexpr int kBlock = 8;
  size_t chunks = 0, meshed = 0, generated = 0, block = 0;
  double seconds = 0, cpu_seconds = 0;
  for (auto _ : state) {
    std::unique_ptr<WorldQueries> q = MakeDefaultWorld();
    const IntBox range = q->world->chunk_bounds();
    const int bx = range.min.x + int(block * 3 % 8) * kBlock;
    const int bz = range.min.z + int(block * 5 % 8) * kBlock;
    ++block;
    const ThreadTimes cpu_start = ThreadSchedstat();
    const Clock::time_point start = Clock::now();
    for (int y = -6; y < -6 + kBlock; ++y)
      for (int z = bz; z < bz + kBlock; ++z)
        for (int x = bx; x < bx + kBlock; ++x)
          meshed += q->cache->Get({x, y, z})->mesh.triangle_count() > 0;
    const double s = Seconds(Clock::now() - start);
    cpu_seconds += ThreadSchedstat().running - cpu_start.running;
    state.SetIterationTime(s);
    seconds += s;
    chunks += kBlock * kBlock * kBlock;
    generated += q->world->resident_chunks();
  }
  state.counters["us_per_chunk"] = seconds * 1e6 / double(chunks);
  // The same on the thread's CPU time: what us_per_chunk would be on an idle core.
  state.counters["cpu_us_per_chunk"] = cpu_seconds * 1e6 / double(chunks);
  state.counters["meshed_fraction"] = double(meshed) / double(chunks);
  state.counters["generated_per_chunk"] = double(generated) / double(chunks);
}
BENCHMARK(BM_ColdChunkPipeline)->UseManualTime()->Unit(benchmark::kMillisecond);

// Casts rays [first, first + count) of `rays` on a fresh default world with `threads` query
// threads; returns the wall time of the casts (world construction and teardown excluded) and adds
// the query threads' scheduler times to *times.
double ColdPass(const std::vector<RaycastInput>& rays, size_t first, size_t count, int threads,
                size_t* hits, ThreadTimes* times) {
  std::unique_ptr<WorldQueries> q = MakeDefaultWorld();
  std::atomic<size_t> next{0}, hit_count{0};
  std::mutex mu;
  auto work = [&] {
    const ThreadTimes start = ThreadSchedstat();
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
      RaycastHit hit = Raycast(*q->index, *q->cache, rays[(first + i) % rays.size()], {});
      if (hit.hit) hit_count.fetch_add(1, std::memory_order_relaxed);
    }
    const ThreadTimes end = ThreadSchedstat();
    std::lock_guard<std::mutex> lock(mu);
    times->running += end.running - start.running;
    times->queued += end.queued - start.queued;
  };
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  const double s = Seconds(Clock::now() - start);
  *hits += hit_count.load();
  return s;
}

// The /64 rays of BM_WorldRaycast, 128 per iteration (the next 128 each time), each iteration on
// a fresh world, one thread.
void BM_ColdWorldRaycast(benchmark::State& state) {
  const std::vector<RaycastInput>& rays = BenchWorldRays(int(state.range(0)));
  constexpr size_t kBatch = 128;
  size_t first = 0, hits = 0;
  double seconds = 0;
  ThreadTimes times;
  for (auto _ : state) {
    const double s = ColdPass(rays, first, kBatch, 1, &hits, &times);
    state.SetIterationTime(s);
    seconds += s;
    first += kBatch;
  }
  const double n = double(state.iterations() * kBatch);
  state.counters["rays_per_second"] = n / seconds;
  state.counters["hit_fraction"] = double(hits) / n;
  state.counters["cores_used"] = times.running / seconds;
  // On the query thread's CPU time: the figure to compare on a shared host.
  state.counters["rays_per_cpu_second"] = n / times.running;
}
BENCHMARK(BM_ColdWorldRaycast)->Arg(64)->UseManualTime()->Unit(benchmark::kMillisecond);

// A cold whole-world pass (the first 256 /64 rays on a fresh world) with 1 or 2 query threads
// sharing the world, broadphase and cache; the ratio of the two rays_per_second is the cold-path
// scaling. On a shared host read it beside the scheduler counters, summed over the query threads
// and divided by wall time: cores_used (on a CPU) and cores_runnable (on a CPU or waiting for one).
// cores_runnable near the thread count means the threads never block on each other, and the pass
// is short of CPU only because the host is busy (with sched_autogroup, as on the project VM, a
// process gets about one group's share however many threads it runs); well below it means the
// threads wait on each other (a lock or a shared build serializes them).
void BM_ColdWorldPass(benchmark::State& state) {
  const std::vector<RaycastInput>& rays = BenchWorldRays(64);
  const int threads = int(state.range(0));
  constexpr size_t kPass = 256;
  size_t hits = 0;
  double seconds = 0;
  ThreadTimes times;
  for (auto _ : state) {
    const double s = ColdPass(rays, 0, kPass, threads, &hits, &times);
    state.SetIterationTime(s);
    seconds += s;
  }
  const double n = double(state.iterations() * kPass);
  state.counters["rays_per_second"] = n / seconds;
  state.counters["hit_fraction"] = double(hits) / n;
  state.counters["cores_used"] = times.running / seconds;
  state.counters["cores_runnable"] = (times.running + times.queued) / seconds;
  // Rays per second of CPU: equal for 1 and 2 threads when the second thread adds no overhead.
  state.counters["rays_per_cpu_second"] = n / times.running;
}
BENCHMARK(BM_ColdWorldPass)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol::bench
