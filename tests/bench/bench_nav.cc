// Navigation on the default cave world (512 x 192 x 512 voxels, seed 1; its own copy, with a
// NavWorld per tile size registered as edit observers), the default agent (radius 0.5, height 2,
// climb 0.5, slope 45 degrees). All times are the benchmark thread's CPU time.
//
// BM_NavTileRebuild: a ball (radius 3) carved into, then filled back on, the ground at the centre
//   of one tile, each a version; timed: rebuilding the tiles the edit made stale (one, the ball is
//   away from the tile's border). us_per_tile.
// BM_FindPath/D: random pairs of ground points at straight-line (horizontal) distance D whose path
//   exists, cycled; warm (every tile the pairs need built first). us_per_path (mean), median_us and
//   p90_us over the pairs of the last pass.
// BM_NavFullRebuild: every tile of the 256 x 256 voxel square at the world's centre dropped, then
//   built again from the voxels (the chunks stay generated). us_per_region, us_per_tile; the
//   incremental rebuild is us_per_region / BM_NavTileRebuild's us_per_tile times cheaper.
// BM_NavTileSize/T: the same three figures for tile edges of T voxels, the measurement behind the
//   tile size (docs/navigation.md): rebuild_us (per ball edit, all stale tiles), path256_us (mean
//   CPU of the D = 256 pairs), region_us.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "core/nav/nav_world.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol::bench {
namespace {

double ThreadCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}

AgentProfile BenchAgent() { return AgentProfile{}; }
constexpr int kTile = NavTileConfig{}.tile_voxels;  // the default tile edge

struct NavBench {
  std::unique_ptr<World> world = testing::MakeCaveWorld(1, WorldConfig{}.size_voxels);
  std::map<int, std::unique_ptr<NavWorld>> navs;            // by tile edge
  std::map<int, std::vector<std::pair<Vec3, Vec3>>> pairs;  // by distance
};

NavBench& Bench() {
  static NavBench* b = new NavBench;
  return *b;
}

NavWorld& NavFor(int tile_voxels) {
  std::unique_ptr<NavWorld>& nav = Bench().navs[tile_voxels];
  if (nav == nullptr) {
    NavSettings settings;
    settings.tiles.tile_voxels = tile_voxels;
    nav = std::make_unique<NavWorld>(*Bench().world, settings);
  }
  return *nav;
}

// The top of the highest solid voxel of column (x, z) (world units), or NaN when there is none or
// water covers it.
float SurfaceY(const World& world, int x, int z) {
  const IntBox b = world.voxel_bounds();
  for (int y = b.max.y - 1; y >= b.min.y; --y) {
    const Voxel v = world.GetVoxel({x, y, z});
    if (IsWater(v)) return NAN;
    if (IsSolid(v)) return float(y + 1) * world.voxel_size();
  }
  return NAN;
}

// 64 pairs of surface points at horizontal distance d with a path (seeded, found with the
// default tiles).
const std::vector<std::pair<Vec3, Vec3>>& PairsAt(int d) {
  std::vector<std::pair<Vec3, Vec3>>& pairs = Bench().pairs[d];
  if (!pairs.empty()) return pairs;
  const World& world = *Bench().world;
  NavWorld& nav = NavFor(kTile);
  std::mt19937 rng(4100 + d);
  const IntBox b = world.voxel_bounds();
  auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * float(rng() / 4294967296.0); };
  for (int attempt = 0; attempt < 4000 && pairs.size() < 64; ++attempt) {
    const float x = uniform(b.min.x + 8, b.max.x - 8), z = uniform(b.min.z + 8, b.max.z - 8);
    const float a = uniform(0, 6.2831853f);
    const float gx = x + float(d) * std::cos(a), gz = z + float(d) * std::sin(a);
    if (gx < b.min.x + 8 || gz < b.min.z + 8 || gx > b.max.x - 8 || gz > b.max.z - 8) continue;
    FindPathInput in;
    in.profile = BenchAgent();
    in.start = Vec3(x, SurfaceY(world, int(std::floor(x)), int(std::floor(z))), z);
    in.goal = Vec3(gx, SurfaceY(world, int(std::floor(gx)), int(std::floor(gz))), gz);
    if (!IsFinite(in.start) || !IsFinite(in.goal)) continue;
    absl::StatusOr<FindPathResult> r = nav.FindPath(in);
    if (r.ok() && r->status == PathStatus::kOk) pairs.push_back({in.start, in.goal});
  }
  return pairs;
}

// Times FindPath over `pairs` (warm); fills the per-path CPU times of the last pass.
void TimePaths(benchmark::State& state, NavWorld& nav,
               const std::vector<std::pair<Vec3, Vec3>>& pairs, std::vector<double>* us) {
  FindPathInput in;
  in.profile = BenchAgent();
  us->assign(pairs.size(), 0);
  size_t i = 0, waypoints = 0;
  int built = 0;
  for (auto _ : state) {
    in.start = pairs[i].first;
    in.goal = pairs[i].second;
    const double begin = ThreadCpuUs();
    absl::StatusOr<FindPathResult> r = nav.FindPath(in);
    (*us)[i] = ThreadCpuUs() - begin;
    if (!r.ok() || r->status != PathStatus::kOk) {
      state.SkipWithError("a warm pair lost its path");
      return;
    }
    waypoints += r->waypoints.size();
    built += r->tiles_built;
    if (++i == pairs.size()) i = 0;
  }
  state.counters["waypoints"] = double(waypoints) / double(state.iterations());
  state.counters["tiles_built"] = built;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

void BM_FindPath(benchmark::State& state) {
  const int d = int(state.range(0));
  const auto& pairs = PairsAt(d);
  if (pairs.empty()) return state.SkipWithError("no reachable pair found");
  NavWorld& nav = NavFor(kTile);
  std::vector<double> us;
  TimePaths(state, nav, pairs, &us);
  const double n = double(state.iterations());
  state.counters["us_per_path"] =
      benchmark::Counter(n * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["median_us"] = Percentile(us, 0.5);
  state.counters["p90_us"] = Percentile(us, 0.9);
  state.counters["pairs"] = double(pairs.size());
}
BENCHMARK(BM_FindPath)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

// A dry ground column within `slack` voxels of the centre of a tile of `tile_voxels` (the tile
// holding the world's centre, else the nearest tile that has one), as (x + 0.5, surface y,
// z + 0.5); NaN y when there is none.
Vec3 EditSpot(int tile_voxels, int slack) {
  const World& world = *Bench().world;
  const int min = world.voxel_bounds().min.x, k0 = -min / tile_voxels;
  for (int ring = 0; ring < 6; ++ring)
    for (int tz = k0 - ring; tz <= k0 + ring; ++tz)
      for (int tx = k0 - ring; tx <= k0 + ring; ++tx) {
        const int cx = min + tx * tile_voxels + tile_voxels / 2;
        const int cz = min + tz * tile_voxels + tile_voxels / 2;
        for (int dz = -slack; dz <= slack; ++dz)
          for (int dx = -slack; dx <= slack; ++dx) {
            const float y = SurfaceY(world, cx + dx, cz + dz);
            if (!std::isnan(y)) return Vec3(float(cx + dx) + 0.5f, y, float(cz + dz) + 0.5f);
          }
      }
  return Vec3(0, NAN, 0);
}

// 32 dry ground columns in the 192 x 192 voxel square at the world's centre (seeded), as
// (x + 0.5, surface y, z + 0.5).
const std::vector<Vec3>& RandomSpots() {
  static const std::vector<Vec3> spots = [] {
    std::vector<Vec3> out;
    std::mt19937 rng(4141);
    while (out.size() < 32) {
      const int x = int(rng() % 192) - 96, z = int(rng() % 192) - 96;
      const float y = SurfaceY(*Bench().world, x, z);
      if (!std::isnan(y)) out.push_back(Vec3(float(x) + 0.5f, y, float(z) + 0.5f));
    }
    return out;
  }();
  return spots;
}

// Ball edit number `count` (radius 3): with `random`, a carve then a fill at each RandomSpots()
// spot in turn; otherwise carve and fill alternately near the centre of a tile of `tile_voxels`,
// far enough from its border that only that tile becomes stale.
void BallEdit(int tile_voxels, bool random, int count) {
  constexpr float kRadius = 3;
  const int reach = NavTileConfig{}.border_voxels + 1 + int(kRadius) + 1;
  static std::map<int, Vec3> centres;
  auto [it, fresh] = centres.try_emplace(tile_voxels);
  if (fresh) it->second = EditSpot(tile_voxels, std::max(0, tile_voxels / 2 - reach));
  FillBallParams ball;
  ball.center = random ? RandomSpots()[size_t(count / 2) % RandomSpots().size()] : it->second;
  ball.radius = kRadius;
  ball.mode = count % 2 == 0 ? EditMode::kSubtract : EditMode::kAdd;
  (void)Bench().world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); });
}

// CPU microseconds per ball edit to rebuild the tiles it made stale, with tiles of
// `tile_voxels`; *tiles counts the tiles rebuilt.
double RebuildUs(benchmark::State& state, int tile_voxels, bool random, int* tiles) {
  NavWorld& nav = NavFor(tile_voxels);
  const AgentProfile agent = BenchAgent();
  const Vec3 lo(-128, 0, -128), hi(127.5f, 0, 127.5f);
  (void)nav.BuildTilesIn(agent, lo, hi);  // warm: every tile an edit can touch
  // Carves and fills alternate across the benchmark's runs too (a second carve would change
  // nothing).
  static std::map<std::pair<int, bool>, int> counts;
  int& edits = counts[{random ? 0 : tile_voxels, random}];
  double total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    BallEdit(tile_voxels, random, edits++);
    state.ResumeTiming();
    const double begin = ThreadCpuUs();
    absl::StatusOr<int> built = nav.BuildTilesIn(agent, lo, hi);
    total += ThreadCpuUs() - begin;
    if (!built.ok() || *built == 0) {
      state.SkipWithError("no tile rebuilt");
      return 0;
    }
    *tiles += *built;
  }
  return total / double(state.iterations());
}

void BM_NavTileRebuild(benchmark::State& state) {
  int tiles = 0;
  const double us = RebuildUs(state, kTile, /*random=*/false, &tiles);
  state.counters["us_per_tile"] = benchmark::Counter(
      double(tiles) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["us_per_edit"] = us;
  state.counters["tiles_per_edit"] = double(tiles) / double(state.iterations());
}
BENCHMARK(BM_NavTileRebuild)->Unit(benchmark::kMicrosecond);

// Drops every tile and builds the 256 x 256 voxel square at the centre again; CPU microseconds.
double RegionUs(benchmark::State& state, int tile_voxels, int* tiles) {
  NavWorld& nav = NavFor(tile_voxels);
  const AgentProfile agent = BenchAgent();
  const Vec3 lo(-128, 0, -128), hi(127.5f, 0, 127.5f);
  (void)nav.BuildTilesIn(agent, lo, hi);  // generates the chunks
  double total = 0;
  for (auto _ : state) {
    state.PauseTiming();
    nav.DropTiles();
    state.ResumeTiming();
    const double begin = ThreadCpuUs();
    absl::StatusOr<int> built = nav.BuildTilesIn(agent, lo, hi);
    total += ThreadCpuUs() - begin;
    if (!built.ok()) {
      state.SkipWithError("region build failed");
      return 0;
    }
    *tiles = *built;
  }
  return total / double(state.iterations());
}

void BM_NavFullRebuild(benchmark::State& state) {
  int tiles = 0;
  const double us = RegionUs(state, kTile, &tiles);
  state.counters["us_per_region"] = us;
  state.counters["tiles"] = tiles;
  state.counters["us_per_tile"] = us / std::max(tiles, 1);
}
BENCHMARK(BM_NavFullRebuild)->Unit(benchmark::kMillisecond);

void BM_NavTileSize(benchmark::State& state) {
  const int t = int(state.range(0));
  int tiles = 0;
  state.counters["rebuild_us"] = RebuildUs(state, t, /*random=*/true, &tiles);
  state.counters["tiles_per_edit"] = double(tiles) / double(state.iterations());
  // Paths and the region outside the timed loop (one pass each).
  NavWorld& nav = NavFor(t);
  const auto& pairs = PairsAt(256);
  FindPathInput in;
  in.profile = BenchAgent();
  std::vector<double> us;
  for (int pass = 0; pass < 2; ++pass) {  // the first pass builds the tiles
    us.clear();
    for (const auto& [start, goal] : pairs) {
      in.start = start;
      in.goal = goal;
      const double begin = ThreadCpuUs();
      (void)nav.FindPath(in);
      us.push_back(ThreadCpuUs() - begin);
    }
  }
  double sum = 0;
  for (double u : us) sum += u;
  state.counters["path256_us"] = us.empty() ? 0 : sum / double(us.size());
  state.counters["path256_median_us"] = us.empty() ? 0 : Percentile(us, 0.5);
  const double begin = ThreadCpuUs();
  nav.DropTiles();
  (void)nav.BuildTilesIn(in.profile, Vec3(-128, 0, -128), Vec3(127.5f, 0, 127.5f));
  state.counters["region_us"] = ThreadCpuUs() - begin;
}
BENCHMARK(BM_NavTileSize)->Arg(16)->Arg(24)->Arg(32)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace voxcol::bench
