// Terrain shape queries on the cave world: sphere and capsule sweeps, capsule and box contacts.
//
// Every benchmark runs its whole query set once before timing. That builds every chunk mesh and
// kD-tree the queries touch (the set is then cycled, and the cache budget holds it), so the timed
// loop measures queries, not mesh builds; the cache_builds counter reports the builds that still
// happened while timing (0 when warm). The query sets are in shape_query_sets.h, shared with the
// Bullet peers in bench_shape_peers.cc.
#include <benchmark/benchmark.h>

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

}  // namespace
}  // namespace voxcol::bench
