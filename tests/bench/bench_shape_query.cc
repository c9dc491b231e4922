// Terrain shape queries on the cave world: sphere and capsule sweeps, capsule and box contacts.
//
// Every benchmark runs its whole query set once before timing. That builds every chunk mesh and
// kD-tree the queries touch (the set is then cycled, and the cache budget holds it), so the timed
// loop measures queries, not mesh builds; the cache_builds counter reports the builds that still
// happened while timing (0 when warm).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/query/shape_query.h"
#include "tests/bench/bench_scenes.h"

namespace voxcol::bench {
namespace {

constexpr int kQueries = 1024;  // per set; a power of two so the loop can mask


Vec3 RandomDirection(std::mt19937& rng) {
  std::normal_distribution<float> n;
  for (;;) {
    Vec3 d{n(rng), n(rng), n(rng)};
    if (LengthSq(d) > 1e-6f) return Normalize(d);
  }
}

Quat RandomRotation(std::mt19937& rng) {
  std::uniform_real_distribution<float> angle(0, 6.2831853f);
  return Quat::FromAxisAngle(RandomDirection(rng), angle(rng));
}

// Sweeps of `shape` from random open points (the shape at its start pose does not touch the
// solid, by the exact overlap test) in random directions, 16 voxels long, random orientations.
// `shape` must outlive the returned sweeps.
std::vector<ShapeSweepInput> MakeSweeps(const ConvexShape* shape, uint32_t seed) {
  const World& world = BenchCaveWorld();
  const BroadphaseIndex& index = BenchCaveIndex();
  NarrowphaseCache& cache = BenchCaveCache();
  std::vector<ShapeSweepInput> sweeps;
  std::mt19937 rng(seed);
  const Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 4, b.max.x - 4), uy(b.min.y + 4, b.max.y - 4),
      uz(b.min.z + 4, b.max.z - 4);
  ShapeOverlapResult overlap;
  while (int(sweeps.size()) < kQueries) {
    ShapeSweepInput in;
    in.shape = {shape, {RandomRotation(rng), {ux(rng), uy(rng), uz(rng)}}};
    OverlapPosedShape(index, cache, in.shape, false, &overlap);
    if (overlap.touches_solid) continue;
    in.direction = RandomDirection(rng);
    in.distance = 16 * world.voxel_size();
    sweeps.push_back(in);
  }
  return sweeps;
}

void RunSweeps(benchmark::State& state, const std::vector<ShapeSweepInput>& sweeps) {
  const BroadphaseIndex& index = BenchCaveIndex();
  NarrowphaseCache& cache = BenchCaveCache();
  ShapeSweepSettings settings;  // closest hit
  ShapeSweepResult result;
  for (const ShapeSweepInput& in : sweeps) SweepShape(index, cache, in, settings, &result);  // warm
  size_t i = 0, hits = 0;
  QueryStats stats;
  for (auto _ : state) {
    SweepShape(index, cache, sweeps[i++ & (kQueries - 1)], settings, &result, &stats);
    hits += result.hit;
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  state.counters["cache_builds"] = double(stats.cache_builds);
}

void BM_SphereSweep(benchmark::State& state) {
  static const ConvexShape shape = MakeSphere(0.5f);
  static const std::vector<ShapeSweepInput> sweeps = MakeSweeps(&shape, 11);
  RunSweeps(state, sweeps);
}
BENCHMARK(BM_SphereSweep);

void BM_CapsuleSweep(benchmark::State& state) {
  static const ConvexShape shape = MakeCapsule(0.9f, 0.4f);
  static const std::vector<ShapeSweepInput> sweeps = MakeSweeps(&shape, 12);
  RunSweeps(state, sweeps);
}
BENCHMARK(BM_CapsuleSweep);

// `shape` resting on the terrain's top surface sunk by 0.05 voxel: surface points from smooth
// raycasts straight down from the sky, ground no steeper than 45 degrees; the shape's lowest point
// (`bottom` below its centre, unrotated) goes there. Random rotations about the vertical axis.
// `shape` must outlive the returned poses.
std::vector<PosedShape> MakeRestingPoses(const ConvexShape* shape, float bottom, uint32_t seed) {
  const World& world = BenchCaveWorld();
  const BroadphaseIndex& index = BenchCaveIndex();
  NarrowphaseCache& cache = BenchCaveCache();
  std::vector<PosedShape> poses;
  std::mt19937 rng(seed);
  const Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 4, b.max.x - 4), uz(b.min.z + 4, b.max.z - 4),
      angle(0, 6.2831853f);
  const float sink = 0.05f * world.voxel_size();
  while (int(poses.size()) < kQueries) {
    RayInput ray{{ux(rng), b.max.y - 1, uz(rng)}, {0, -1, 0}, b.max.y - b.min.y - 2};
    RayHit hit = Raycast(index, cache, ray, RaySettings{});
    if (!hit.hit || hit.started_inside || hit.normal.y < 0.7071f) continue;
    Vec3 center = hit.position + Vec3{0, bottom - sink, 0};
    poses.push_back({shape, {Quat::FromAxisAngle({0, 1, 0}, angle(rng)), center}});
  }
  return poses;
}

void RunContacts(benchmark::State& state, const std::vector<PosedShape>& poses) {
  const BroadphaseIndex& index = BenchCaveIndex();
  NarrowphaseCache& cache = BenchCaveCache();
  ContactSettings settings;  // no margin, water contact included
  ContactResult result;
  for (const PosedShape& p : poses) ShapeContacts(index, cache, p, settings, &result);  // warm
  size_t i = 0, points = 0, touching = 0;
  QueryStats stats;
  for (auto _ : state) {
    ShapeContacts(index, cache, poses[i++ & (kQueries - 1)], settings, &result, &stats);
    const int n = result.total_points();
    points += size_t(n);
    touching += n > 0;
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["contacts_per_query"] = double(points) / double(state.iterations());
  state.counters["touch_ratio"] = double(touching) / double(state.iterations());
  state.counters["cache_builds"] = double(stats.cache_builds);
}

void BM_CapsuleContacts(benchmark::State& state) {
  static const ConvexShape shape = MakeCapsule(0.9f, 0.4f);
  static const std::vector<PosedShape> poses = MakeRestingPoses(&shape, 0.9f + 0.4f, 21);
  RunContacts(state, poses);
}
BENCHMARK(BM_CapsuleContacts);

void BM_BoxContacts(benchmark::State& state) {
  static const ConvexShape shape = MakeBox({0.5f, 0.5f, 0.5f});
  static const std::vector<PosedShape> poses = MakeRestingPoses(&shape, 0.5f, 22);
  RunContacts(state, poses);
}
BENCHMARK(BM_BoxContacts);

}  // namespace
}  // namespace voxcol::bench
