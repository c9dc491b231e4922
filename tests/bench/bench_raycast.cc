// Blocky (DDA) raycasts over the cave world.
#include <benchmark/benchmark.h>

#include "tests/bench/bench_scenes.h"

namespace voxcol::bench {
namespace {

void BM_RaycastBlocky(benchmark::State& state) {
  World& world = BenchCaveWorld();
  const BroadphaseIndex& index = BenchCaveIndex();
  std::vector<RaycastInput> rays = DownwardRays(world, 4096, 5);
  for (const RaycastInput& r : rays)
    RaycastBlocky(index, r, RaycastSettings{});  // warm: chunks and masks
  size_t i = 0, hits = 0;
  QueryStats stats;
  for (auto _ : state) {
    RaycastHit hit = RaycastBlocky(index, rays[i++ & 4095], RaycastSettings{}, &stats);
    hits += hit.hit;
    benchmark::DoNotOptimize(hit);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  state.counters["voxels_per_ray"] = double(stats.voxels_visited) / double(state.iterations());
}
BENCHMARK(BM_RaycastBlocky);

}  // namespace
}  // namespace voxcol::bench
