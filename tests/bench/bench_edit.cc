// Edit throughput: FillBall at several radii (edits per second) and region I/O (MB/s).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/voxel/edit.h"
#include "core/voxel/voxel_io.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// One World::Edit per iteration: a ball at a random point of a 256x192x256 cave world, alternating
// rock and air so that every edit changes voxels.
void BM_FillBall(benchmark::State& state) {
  static auto world = testing::MakeCaveWorld(1, {256, 192, 256});
  const float radius = float(state.range(0));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f), uy(-60.0f, 60.0f);
  uint64_t changed = 0, i = 0;
  for (auto _ : state) {
    FillBallParams params{{u(rng), uy(rng), u(rng)},
                          radius,
                          (i++ & 1) ? kMaterialAir : kMaterialRock,
                          EditMode::kAdd};
    absl::StatusOr<EditResult> result =
        world->Edit([&](ChunkEdit& edit) { return FillBall(edit, params, EditLimits{}); });
    changed += result->changes.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["chunks_per_edit"] = double(changed) / double(state.iterations());
}
BENCHMARK(BM_FillBall)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMicrosecond);

// A 64^3 region (262,144 voxels, 512 KiB of materials + occupancies) of resident cave chunks.
constexpr IntBox kIoRegion{{-32, -32, -32}, {32, 32, 32}};

void BM_ReadVoxels(benchmark::State& state) {
  static auto world = testing::MakeCaveWorld(1, {256, 192, 256});
  uint64_t version = 0;
  (void)ReadVoxels(*world, kIoRegion, EditLimits{}, &version);  // generate the chunks first
  for (auto _ : state) {
    absl::StatusOr<VoxelArrays> voxels = ReadVoxels(*world, kIoRegion, EditLimits{}, &version);
    benchmark::DoNotOptimize(voxels->materials.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * kIoRegion.Volume());
}
BENCHMARK(BM_ReadVoxels)->Unit(benchmark::kMillisecond);

// One World::Edit per iteration writing the whole region, alternating two contents so that every
// voxel changes (includes the copy-on-write, the diff and the publish).
void BM_WriteVoxels(benchmark::State& state) {
  static auto world = testing::MakeEmptyWorld({256, 192, 256});
  VoxelArrays contents[2];
  std::mt19937 rng(3);
  for (int k = 0; k < 2; ++k) {
    contents[k].region = kIoRegion;
    for (int64_t i = 0; i < kIoRegion.Volume(); ++i) {
      contents[k].materials.push_back(uint8_t(2 + k));
      contents[k].occupancies.push_back(uint8_t(1 + rng() % 255));
    }
  }
  uint64_t i = 0;
  for (auto _ : state) {
    const VoxelArrays& v = contents[i++ & 1];
    absl::StatusOr<EditResult> result =
        world->Edit([&](ChunkEdit& edit) { return WriteVoxels(edit, v, EditLimits{}); });
    benchmark::DoNotOptimize(result->version);
  }
  state.SetBytesProcessed(state.iterations() * 2 * kIoRegion.Volume());
}
BENCHMARK(BM_WriteVoxels)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol
