// Blocky (DDA) raycasts over the default cave world.
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/query/raycast.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// Rays from random points above the terrain, angled downward, 64 voxels long.
std::vector<RayInput> DownwardRays(const World& world, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 1, b.max.x - 1), uz(b.min.z + 1, b.max.z - 1),
      uy(20, b.max.y - 1), ud(-1, 1);
  std::vector<RayInput> rays;
  for (int i = 0; i < count; ++i) rays.push_back({{ux(rng), uy(rng), uz(rng)}, {ud(rng), -1.0f, ud(rng)}, 64});
  return rays;
}

void BM_RaycastBlocky(benchmark::State& state) {
  static auto world = testing::MakeCaveWorld(1, {256, 192, 256});
  static BroadphaseIndex index(*world);
  std::vector<RayInput> rays = DownwardRays(*world, 4096, 5);
  for (const RayInput& r : rays)
    RaycastBlocky(index, r, RaySettings{});  // warm: generate chunks and masks
  size_t i = 0, hits = 0;
  QueryStats stats;
  for (auto _ : state) {
    RayHit hit = RaycastBlocky(index, rays[i++ & 4095], RaySettings{}, &stats);
    hits += hit.hit;
    benchmark::DoNotOptimize(hit);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  state.counters["voxels_per_ray"] = double(stats.voxels_visited) / double(state.iterations());
}
BENCHMARK(BM_RaycastBlocky);

}  // namespace
}  // namespace voxcol
