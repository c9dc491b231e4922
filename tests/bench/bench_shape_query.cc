// Terrain shape queries on the cave world: sphere and capsule sweeps, capsule and box contacts.
//
// Every benchmark runs its whole query set once before timing. That builds every chunk mesh and
// kD-tree the queries touch (the set is then cycled, and the cache budget holds it), so the timed
// loop measures queries, not mesh builds; the cache_builds counter reports the builds that still
// happened while timing (0 when warm). The query sets are in shape_query_sets.h, shared with the
// Bullet peers in bench_shape_peers.cc.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <vector>

#include "core/query/sweep.h"
#include "tests/bench/bench_scenes.h"
#include "tests/bench/shape_query_sets.h"

namespace voxcol::bench {
namespace {

constexpr int kQueries = kShapeQueries;

void RunSweeps(benchmark::State& state, const std::vector<SweepInput>& sweeps) {
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  SweepSettings settings;  // closest hit
  SweepResult result;
  for (const SweepInput& in : sweeps) Sweep(index, cache, in, settings, &result);  // warm
  size_t i = 0, hits = 0;
  QueryStats stats;
  for (auto _ : state) {
    Sweep(index, cache, sweeps[i++ & (kQueries - 1)], settings, &result, &stats);
    hits += result.hit;
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  state.counters["cache_builds"] = double(stats.cache_builds);
}

void BM_SphereSweep(benchmark::State& state) { RunSweeps(state, SphereSweepSet()); }
BENCHMARK(BM_SphereSweep);

void BM_CapsuleSweep(benchmark::State& state) { RunSweeps(state, CapsuleSweepSet()); }
BENCHMARK(BM_CapsuleSweep);

void RunContacts(benchmark::State& state, const std::vector<PosedShape>& poses) {
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  ContactsSettings settings;  // no margin, water contact included
  ContactsResult result;
  for (const PosedShape& p : poses) Contacts(index, cache, p, settings, &result);  // warm
  size_t i = 0, points = 0, touching = 0;
  QueryStats stats;
  for (auto _ : state) {
    Contacts(index, cache, poses[i++ & (kQueries - 1)], settings, &result, &stats);
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

void BM_CapsuleContacts(benchmark::State& state) { RunContacts(state, CapsuleRestingSet()); }
BENCHMARK(BM_CapsuleContacts);

void BM_BoxContacts(benchmark::State& state) { RunContacts(state, BoxRestingSet()); }
BENCHMARK(BM_BoxContacts);

// Centres of the large-sphere contacts: open cave points (a small sphere there touches no solid,
// and the terrain lies both straight above and straight below), from a fixed seed, kept only where
// `sphere` there has contacts, so every query really meets terrain surfaces.
std::vector<PosedShape> LargeSpherePoses(const ConvexShape* sphere) {
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  const Aabb b = BenchCaveWorld().world_bounds();
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> ux(b.min.x + 8, b.max.x - 8), uy(b.min.y + 8, b.max.y - 8),
      uz(b.min.z + 8, b.max.z - 8);
  const ConvexShape probe = MakeSphere(0.5f);
  std::vector<PosedShape> poses;
  OverlapResult overlap;
  ContactsResult contacts;
  while (poses.size() < 8) {
    const Vec3 c{ux(rng), uy(rng), uz(rng)};
    Overlap(index, cache, {&probe, {Quat(), c}}, {}, &overlap);
    if (overlap.touches_solid || overlap.touches_water) continue;
    const float span = b.max.y - b.min.y;
    if (!Raycast(index, cache, {c, {0, 1, 0}, span}, RaycastSettings{}).hit ||
        !Raycast(index, cache, {c, {0, -1, 0}, span}, RaycastSettings{}).hit) {
      continue;
    }
    const PosedShape pose{sphere, {Quat(), c}};
    Contacts(index, cache, pose, {}, &contacts);
    if (contacts.total_points() > 0) poses.push_back(pose);
  }
  return poses;
}

// Issue 16: Contacts of a sphere of radius state.range(0) (world units; 1 unit voxels) at eight
// cave positions, through the core function the server's Contacts RPC calls; one iteration runs
// all eight. Warm: the poses are chosen with the same queries, so every chunk mesh and kD-tree
// they touch is built before timing. cpu_ms_per_query is CPU time per query (the figure the
// issue-39 target is on: a shared host's wall time includes other processes' turns),
// ms_per_query wall time per query.
void BM_ContactsLargeSphere(benchmark::State& state) {
  const ConvexShape sphere = MakeSphere(float(state.range(0)));
  const std::vector<PosedShape> poses = LargeSpherePoses(&sphere);
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  ContactsSettings settings;  // no margin, water contact included, as the RPC's defaults
  ContactsResult result;
  size_t points = 0;
  QueryStats stats;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (const PosedShape& pose : poses) {
      Contacts(index, cache, pose, settings, &result, &stats);
      points += size_t(result.total_points());
      benchmark::DoNotOptimize(result);
    }
  }
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const double n = double(state.iterations() * poses.size());
  state.SetLabel("warm cache");
  // CPU seconds / (n * 1e-3): milliseconds of CPU per query.
  state.counters["cpu_ms_per_query"] =
      benchmark::Counter(n * 1e-3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["ms_per_query"] = wall_ms / n;
  state.counters["contacts_per_query"] = double(points) / n;
  state.counters["triangles_per_query"] = double(stats.triangles_tested) / n;
  state.counters["chunks_per_query"] = double(stats.chunks_visited) / n;
  state.counters["cache_builds"] = double(stats.cache_builds);
}
BENCHMARK(BM_ContactsLargeSphere)->Arg(16)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol::bench
