// Broadphase: mask queries against a plain voxel scan, mask building, and memory of the default
// world.
//
//   build/tests/bench/voxcol_bench --benchmark_filter='Mask|VoxelScan|BroadphaseMemory'
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/broadphase/probe.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr int kBoxes = 4096;  // power of two: the loops index with & (kBoxes - 1)

const World& CaveWorld() {
  static auto world = testing::MakeCaveWorld(1, {256, 192, 256});
  return *world;
}

BroadphaseIndex& CaveIndex() {
  static BroadphaseIndex index(CaveWorld());
  return index;
}

// Boxes of `size` world units at uniformly random places inside the world; the same seed gives
// the same boxes to every benchmark that asks for the same size.
std::vector<Aabb> RandomBoxes(const World& world, Vec3 size, uint32_t seed) {
  std::mt19937 rng(seed);
  Aabb b = world.world_bounds();
  std::vector<Aabb> boxes;
  for (int i = 0; i < kBoxes; ++i) {
    Vec3 lo;
    for (int a = 0; a < 3; ++a)
      lo[a] = std::uniform_real_distribution<float>(b.min[a], b.max[a] - size[a])(rng);
    boxes.push_back({lo, lo + size});
  }
  return boxes;
}

const std::vector<Aabb>& CharacterBoxes() {
  static std::vector<Aabb> boxes = RandomBoxes(CaveWorld(), {1, 2, 1}, 11);
  return boxes;
}

// The same question answered from voxels: any solid / water voxel within one voxel of the grown
// range (the dilation), reading each chunk once and stopping when both classes are found.
uint8_t VoxelScan(const World& world, const Aabb& box) {
  IntBox range = ProbeVoxelRange(world, box);
  IntBox scan =
      IntBox{range.min - Int3{1, 1, 1}, range.max + Int3{1, 1, 1}}.Intersect(world.voxel_bounds());
  ChunkKey c0 = ChunkOf(scan.min), c1 = ChunkOf(scan.max - Int3{1, 1, 1});
  uint8_t found = 0;
  for (int cy = c0.y; cy <= c1.y; ++cy)
    for (int cz = c0.z; cz <= c1.z; ++cz)
      for (int cx = c0.x; cx <= c1.x; ++cx) {
        ChunkPtr chunk = world.GetChunk({cx, cy, cz});
        IntBox local =
            scan.Intersect({ChunkOrigin({cx, cy, cz}), ChunkOrigin({cx + 1, cy + 1, cz + 1})});
        for (int y = local.min.y; y < local.max.y; ++y)
          for (int z = local.min.z; z < local.max.z; ++z)
            for (int x = local.min.x; x < local.max.x; ++x) {
              Voxel v = chunk->At(LocalOf({x, y, z}));
              found |= CountsAsSolid(v) * kClassSolid | CountsAsWater(v) * kClassWater;
            }
        if (found == kClassAny) return found;
      }
  return found;
}

void RunMaskQueries(benchmark::State& state, const std::vector<Aabb>& boxes) {
  BroadphaseIndex& index = CaveIndex();
  ProbeResult result;
  for (const Aabb& b : boxes) ProbeAabb(index, b, ProbeSettings{}, &result);  // warm: build masks
  size_t i = 0, solid = 0, chunks = 0;
  for (auto _ : state) {
    ProbeAabb(index, boxes[i++ & (kBoxes - 1)], ProbeSettings{}, &result);
    solid += result.may_touch_solid;
    chunks += result.chunks_visited;
    benchmark::DoNotOptimize(result.may_touch_water);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["solid_ratio"] = double(solid) / double(state.iterations());
  state.counters["chunks_per_query"] = double(chunks) / double(state.iterations());
}

void BM_MaskQuery_CharacterBox(benchmark::State& state) { RunMaskQueries(state, CharacterBoxes()); }
BENCHMARK(BM_MaskQuery_CharacterBox);

void BM_VoxelScan_CharacterBox(benchmark::State& state) {
  const World& world = CaveWorld();
  const std::vector<Aabb>& boxes = CharacterBoxes();
  for (const Aabb& b : boxes) VoxelScan(world, b);  // warm: generate chunks
  size_t i = 0, solid = 0;
  for (auto _ : state) {
    uint8_t found = VoxelScan(world, boxes[i++ & (kBoxes - 1)]);
    solid += (found & kClassSolid) != 0;
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["solid_ratio"] = double(solid) / double(state.iterations());
}
BENCHMARK(BM_VoxelScan_CharacterBox);

void BM_MaskQuery_LargeBox(benchmark::State& state) {
  static std::vector<Aabb> boxes = RandomBoxes(CaveWorld(), {32, 32, 32}, 12);
  RunMaskQueries(state, boxes);
}
BENCHMARK(BM_MaskQuery_LargeBox);

// Neighbourhoods of partial chunks (the only ones whose masks are computed bit by bit).
std::vector<std::array<ChunkPtr, 27>> PartialNeighbourhoods(int count) {
  const World& world = CaveWorld();
  std::vector<std::array<ChunkPtr, 27>> hoods;
  std::mt19937 rng(13);
  IntBox cb = world.chunk_bounds();
  while (int(hoods.size()) < count) {
    ChunkKey key{cb.min.x + int(rng() % (cb.max.x - cb.min.x)),
                 cb.min.y + int(rng() % (cb.max.y - cb.min.y)),
                 cb.min.z + int(rng() % (cb.max.z - cb.min.z))};
    std::array<ChunkPtr, 27> hood;
    ChunkNeighbourhood raw;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz)
        for (int dx = -1; dx <= 1; ++dx) {
          hood[NeighbourIndex(dx, dy, dz)] = world.GetChunk(key + Int3{dx, dy, dz});
          raw[NeighbourIndex(dx, dy, dz)] = hood[NeighbourIndex(dx, dy, dz)].get();
        }
    if (BuildChunkMasks(raw).kind == MaskKind::kPartial) hoods.push_back(std::move(hood));
  }
  return hoods;
}

void BM_MaskBuild(benchmark::State& state) {
  static std::vector<std::array<ChunkPtr, 27>> hoods = PartialNeighbourhoods(64);
  std::vector<ChunkNeighbourhood> raw(hoods.size());
  for (size_t h = 0; h < hoods.size(); ++h)
    for (int i = 0; i < 27; ++i) raw[h][i] = hoods[h][i].get();
  size_t i = 0;
  for (auto _ : state) {
    ChunkMasks masks = BuildChunkMasks(raw[i++ & 63]);
    benchmark::DoNotOptimize(masks);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MaskBuild);

// Not a speed benchmark: builds every chunk of the default world (512x192x512, seed 1) once and
// reports the broadphase memory as counters.
void BM_BroadphaseMemory_DefaultWorld(benchmark::State& state) {
  auto world = testing::MakeCaveWorld(1, {512, 192, 512});
  BroadphaseIndex index(*world);
  for (auto _ : state) index.BuildAll();
  BroadphaseMemory m = index.Memory();
  state.counters["chunks"] = double(m.built_chunks);
  state.counters["empty_chunks"] = double(m.empty_chunks);
  state.counters["full_chunks"] = double(m.full_chunks);
  state.counters["partial_chunks"] = double(m.partial_chunks);
  state.counters["slot_bytes"] = double(m.slot_bytes);
  state.counters["record_bytes"] = double(m.record_bytes);
  state.counters["mask_bytes"] = double(m.mask_bytes);
  state.counters["total_bytes"] = double(m.total_bytes());
  state.counters["mask_bits_per_voxel"] = m.MaskBitsPerVoxel();
  state.counters["total_bits_per_voxel"] = m.TotalBitsPerVoxel();
}
BENCHMARK(BM_BroadphaseMemory_DefaultWorld)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol
