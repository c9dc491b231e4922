// Scenes shared by benchmarks: the cave world and ray sets.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/query/raycast.h"
#include "tests/core/test_worlds.h"

namespace voxcol::bench {

// The benchmark cave world (256x192x256 voxels, seed 1), built once per process.
inline World& BenchCaveWorld() {
  static std::unique_ptr<World> world = testing::MakeCaveWorld(1, {256, 192, 256});
  return *world;
}

// The broadphase of BenchCaveWorld(), built lazily.
inline const BroadphaseIndex& BenchCaveIndex() {
  static BroadphaseIndex index(BenchCaveWorld());
  return index;
}

// The narrowphase cache of BenchCaveWorld() (256 MiB budget).
inline ChunkCollisionCache& BenchCaveCache() {
  static ChunkCollisionCache cache(BenchCaveWorld(), size_t(256) << 20);
  return cache;
}

// Rays from random points above the terrain, angled downward, 64 voxels long.
inline std::vector<RaycastInput> DownwardRays(const World& world, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 1, b.max.x - 1), uz(b.min.z + 1, b.max.z - 1),
      uy(20, b.max.y - 1), ud(-1, 1);
  std::vector<RaycastInput> rays;
  for (int i = 0; i < count; ++i)
    rays.push_back({{ux(rng), uy(rng), uz(rng)}, {ud(rng), -1.0f, ud(rng)}, 64});
  return rays;
}

}  // namespace voxcol::bench
