// Whole-world scenes shared by the whole-world raycast benchmarks (bench_world_raycast.cc) and the
// Embree oracle test (world_raycast_embree_test.cc): the default world as the server builds it,
// the benchmark's ray sets, and the triangles of every meshed chunk as one array for the peers.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/mesh/marching_cubes.h"
#include "core/query/raycast.h"
#include "core/voxel/world.h"
#include "tests/core/test_worlds.h"

namespace voxcol::bench {

// The server's default narrowphase cache budget (--chunk_collision_cache_mb=256).
constexpr size_t kServerCacheBytes = size_t(256) << 20;

// A world with the query structures the server builds over it (server/app/main.cc): the default
// WorldConfig (512x192x512 voxels, voxel size 1), seed 1, CaveGenerator with default CaveParams,
// a BroadphaseIndex and a ChunkCollisionCache, both registered as edit observers.
struct WorldQueries {
  std::unique_ptr<World> world;
  std::unique_ptr<BroadphaseIndex> index;
  std::unique_ptr<ChunkCollisionCache> cache;
};

// A fresh default world: nothing generated, meshed or cached yet.
inline std::unique_ptr<WorldQueries> MakeDefaultWorld(size_t cache_bytes = kServerCacheBytes) {
  auto q = std::make_unique<WorldQueries>();
  q->world = testing::MakeCaveWorld(1, WorldConfig{}.size_voxels);
  q->index = std::make_unique<BroadphaseIndex>(*q->world);
  q->cache = std::make_unique<ChunkCollisionCache>(*q->world, cache_bytes);
  q->world->AddObserver(q->index.get());
  q->world->AddObserver(q->cache.get());
  return q;
}

// The default world shared by the warm benchmarks, built once per process (warmed by its users).
inline WorldQueries& SharedDefaultWorld() {
  static std::unique_ptr<WorldQueries> q = MakeDefaultWorld();
  return *q;
}

// The ray lengths of the whole-world benchmarks (world units).
constexpr int kWorldRayLengths[] = {8, 64, 512};
constexpr int kWorldRayCount = 16384;

// `count` rays with origins uniform in the world box, directions uniform on the sphere, of
// `length` world units. Deterministic for a seed (std::mt19937 and explicit transforms only).
inline std::vector<RaycastInput> WorldRays(const World& world, float length, int count,
                                           uint32_t seed) {
  std::mt19937 rng(seed);
  const Aabb b = world.world_bounds();
  auto uniform = [&rng](float lo, float hi) {
    return lo + (hi - lo) * float(double(rng()) / 4294967296.0);  // [lo, hi)
  };
  std::vector<RaycastInput> rays;
  rays.reserve(size_t(count));
  for (int i = 0; i < count; ++i) {
    Vec3 origin(uniform(b.min.x, b.max.x), uniform(b.min.y, b.max.y), uniform(b.min.z, b.max.z));
    const float z = uniform(-1, 1), phi = uniform(0, 6.2831853f), r = std::sqrt(1 - z * z);
    rays.push_back({origin, Vec3(r * std::cos(phi), r * std::sin(phi), z), length});
  }
  return rays;
}

// The benchmark's ray set for one length: kWorldRayCount rays, seed 1500 + length.
inline const std::vector<RaycastInput>& BenchWorldRays(int length) {
  static const auto* sets = [] {
    auto* s = new std::vector<std::vector<RaycastInput>>;
    const World& world = SharedDefaultWorld().world.operator*();
    for (int l : kWorldRayLengths)
      s->push_back(WorldRays(world, float(l), kWorldRayCount, 1500 + l));
    return s;
  }();
  for (size_t i = 0; i < std::size(kWorldRayLengths); ++i)
    if (kWorldRayLengths[i] == length) return (*sets)[i];
  std::abort();  // not a benchmark length
}

// Runs fn(i) for i in [0, n) on `threads` threads (dynamic assignment, one index at a time).
template <typename Fn>
void ParallelFor(int threads, size_t n, Fn&& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

// Passes of `rays` on two threads until one changes nothing in the broadphase index (no record
// built, no chunk newly noted as met), at most kMaxWarmPasses: the warm-up of the warm benchmarks.
// A chunk a ray meets first is proven empty along the ray or meshed without its broadphase record,
// and the second meeting builds the record (BroadphaseIndex::NoteMet). Meetings chain: a ray
// answered from its origin cell owner's first-meeting proof may, once the owner has its record,
// read its origin voxel's chunk (another one near a chunk's low faces) and meet that one first;
// at e5a7b04 the /8 set's records settled on the third pass (1,049 of 26,720 built there).
constexpr int kMaxWarmPasses = 6;
inline void WarmRays(WorldQueries& q, const std::vector<RaycastInput>& rays,
                     const RaycastSettings& settings) {
  auto state = [&q] {
    const BroadphaseMemory m = q.index->Memory();
    return std::pair(m.built_chunks, m.met_chunks);
  };
  auto before = state();
  for (int pass = 0; pass < kMaxWarmPasses; ++pass) {
    ParallelFor(2, rays.size(), [&](size_t i) { Raycast(*q.index, *q.cache, rays[i], settings); });
    const auto now = state();
    if (now == before) return;
    before = now;
  }
  std::fprintf(stderr, "WarmRays: the broadphase index still changed after %d passes\n",
               kMaxWarmPasses);
}

// The rays of BM_WorldRaycast/<length> split by where they start: [0] in air, [1] inside terrain
// (voxcol answers started_inside from the origin's cell; Embree reports the back face such a ray
// leaves through, or nothing: not the same question). The classification pass and WarmRays, once
// per length and process, are the warm-up: the cache (256 MiB) holds every chunk the rays reach,
// which cache_builds=0 confirms.
inline const std::array<std::vector<RaycastInput>, 2>& SplitWorldRays(int length) {
  static std::mutex mu;
  static std::map<int, std::array<std::vector<RaycastInput>, 2>> by_length;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = by_length.try_emplace(length);
  if (!inserted) return it->second;
  WorldQueries& q = SharedDefaultWorld();
  const std::vector<RaycastInput>& rays = BenchWorldRays(length);
  std::vector<uint8_t> started_inside(rays.size());
  ParallelFor(2, rays.size(), [&](size_t i) {
    started_inside[i] = Raycast(*q.index, *q.cache, rays[i], RaycastSettings{}).started_inside;
  });
  for (size_t i = 0; i < rays.size(); ++i) it->second[started_inside[i]].push_back(rays[i]);
  WarmRays(q, rays, RaycastSettings{});
  return it->second;
}

// Every meshed chunk of a world: the mesh of each chunk in MeshedChunkRange that has triangles
// (built with MeshChunk, the function the narrowphase cache builds with, so the triangles are
// bit-identical to the ones voxcol's kD-trees index), with its vertices decoded to floats.
struct WorldMeshes {
  std::vector<ChunkKey> keys;
  std::vector<ChunkMesh> meshes;
  std::vector<std::vector<Vec3>> float_vertices;  // per chunk, decoded (the peers need floats)
  size_t triangles = 0;
};

// Meshes the whole world on `threads` threads. Generates every chunk of the world (the world
// keeps them resident; the narrowphase cache is not touched).
inline std::unique_ptr<WorldMeshes> MeshWholeWorld(const World& world, int threads) {
  const IntBox range = MeshedChunkRange(world);
  std::vector<ChunkKey> all;
  for (int y = range.min.y; y < range.max.y; ++y)
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int x = range.min.x; x < range.max.x; ++x) all.push_back({x, y, z});
  std::vector<ChunkMesh> meshes(all.size());
  ParallelFor(threads, all.size(), [&](size_t i) { meshes[i] = MeshChunk(world, all[i]); });
  auto out = std::make_unique<WorldMeshes>();
  for (size_t i = 0; i < all.size(); ++i) {
    if (meshes[i].triangle_count() == 0) continue;
    out->keys.push_back(all[i]);
    out->triangles += meshes[i].triangle_count();
    std::vector<Vec3> decoded(meshes[i].vertex_count());
    for (uint32_t v = 0; v < meshes[i].vertex_count(); ++v) decoded[v] = meshes[i].Vertex(v);
    out->float_vertices.push_back(std::move(decoded));
    out->meshes.push_back(std::move(meshes[i]));
  }
  return out;
}

// The meshes of SharedDefaultWorld(), built once per process on two threads.
inline const WorldMeshes& SharedWorldMeshes() {
  static std::unique_ptr<WorldMeshes> m = MeshWholeWorld(*SharedDefaultWorld().world, 2);
  return *m;
}

}  // namespace voxcol::bench
