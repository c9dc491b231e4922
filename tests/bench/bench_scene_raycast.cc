// Whole-world raycasts with bodies registered (issue 42's bound: a whole-world raycast with 1,000
// bodies costs at most 1.3x one without).
//
// - BM_WorldRaycastBodies/<length>/<bodies>/<air>: the rays of BM_WorldRaycast/<length> (air = 0)
//   or only those of them that start in air (air = 1, BM_WorldRaycastAir's set) through
//   SceneRaycast (core/scene), the function the server runs for a Raycast with a body filter:
//   terrain first, then the bodies' ray clipped at the terrain hit. <bodies> humanoids (5 parts)
//   stand on the terrain's top surface at random places of the default world and walk circles of
//   2-4 m; 120 ticks are applied before timing (the 60-tick history is full) and the rays ask the
//   latest tick. <bodies> = 0: a body world with ticks and no body; -1: no body query at all
//   (SceneRaycast with the terrain only: the wrapper's own cost).
//   Compare with BM_WorldRaycast/<length> and BM_WorldRaycastAir/<length> of the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "core/bodies/body_world.h"
#include "core/scene/scene_raycast.h"
#include "tests/bench/world_scenes.h"

namespace voxcol::bench {
namespace {

constexpr int kWarmTicks = 120;

std::vector<BodyPartDesc> Humanoid() {
  std::vector<BodyPartDesc> parts(5);
  parts[0] = {1, MakeSphere(0.15f), {Quat{}, {0, 1.65f, 0}}};
  parts[1] = {2, MakeCapsule(0.3f, 0.22f), {Quat{}, {0, 1.1f, 0}}};
  parts[2] = {3, MakeBox({0.06f, 0.3f, 0.06f}), {Quat{}, {-0.32f, 1.1f, 0}}};
  parts[3] = {4, MakeBox({0.06f, 0.3f, 0.06f}), {Quat{}, {0.32f, 1.1f, 0}}};
  parts[4] = {5, MakeCapsule(0.35f, 0.12f), {Quat{}, {0, 0.45f, 0}}};
  return parts;
}

// `n` humanoids on the top surface of the shared default world, walked for kWarmTicks ticks.
std::unique_ptr<BodyWorld> MakeBodies(WorldQueries& q, int n) {
  std::mt19937 rng(7);
  const Aabb b = q.world->world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 5, b.max.x - 5), uz(b.min.z + 5, b.max.z - 5);
  std::uniform_real_distribution<float> radius(2, 4), phase(0, 6.2831853f);
  struct Walker {
    Vec3 centre;
    float radius, phase;
  };
  std::vector<Walker> walkers;
  while (int(walkers.size()) < n) {
    const Vec3 top{ux(rng), b.max.y - 0.5f, uz(rng)};
    const RaycastHit ground =
        Raycast(*q.index, *q.cache, {top, {0, -1, 0}, b.max.y - b.min.y - 1}, RaycastSettings{});
    if (!ground.hit || ground.started_inside) continue;
    walkers.push_back({ground.position, radius(rng), phase(rng)});
  }
  auto pose = [&](const Walker& w, int tick) {
    const float a = w.phase + 6.2831853f * float(tick) / 240;
    return RigidTransform{Quat::FromAxisAngle({0, 1, 0}, -a),
                          w.centre + Vec3{std::cos(a), 0, std::sin(a)} * w.radius};
  };
  auto world = std::make_unique<BodyWorld>();
  BodyBatch create;
  for (int i = 0; i < n; ++i)
    create.create.push_back({BodyId(i), 0, 1, pose(walkers[i], 0), Humanoid()});
  if (!world->Apply(create).ok()) return nullptr;
  for (int t = 1; t <= kWarmTicks; ++t) {
    BodyBatch move;
    move.tick = t;
    for (int i = 0; i < n; ++i) move.move.push_back({BodyId(i), pose(walkers[i], t)});
    if (!world->Apply(move).ok()) return nullptr;
  }
  return world;
}

const BodyWorld& SharedBodies(int n) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<BodyWorld>> worlds;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<BodyWorld>& w = worlds[n];
  if (!w) w = MakeBodies(SharedDefaultWorld(), n);
  return *w;
}

void BM_WorldRaycastBodies(benchmark::State& state) {
  WorldQueries& q = SharedDefaultWorld();
  // All of BM_WorldRaycast's rays, or those that start in air; splitting them warms the cache.
  const int length = int(state.range(0));
  const std::vector<RaycastInput>& air = SplitWorldRays(length)[0];
  const std::vector<RaycastInput>& rays = state.range(2) ? air : BenchWorldRays(length);
  // bodies = -1: SceneRaycast with the terrain only (the wrapper's own cost, no body query).
  const BodyWorld& bodies = SharedBodies(std::max<int>(0, int(state.range(1))));
  SceneFilter filter;
  filter.bodies = state.range(1) >= 0;
  filter.tick = bodies.latest_tick();
  const RaycastSettings settings;  // smooth, water passed through: the server's defaults
  QueryStats stats;
  size_t i = 0, terrain_hits = 0, body_hits = 0;
  BodyQueryStats body_stats;
  SceneRayHit hit;
  for (auto _ : state) {
    if (!SceneRaycast(*q.index, *q.cache, &bodies, rays[i], settings, filter, &hit, &stats).ok()) {
      state.SkipWithError("SceneRaycast failed");
      break;
    }
    terrain_hits += hit.kind == SceneHitKind::kTerrain;
    body_hits += hit.kind == SceneHitKind::kBody;
    body_stats.nodes_visited += hit.body_stats.nodes_visited;
    body_stats.parts_tested += hit.body_stats.parts_tested;
    benchmark::DoNotOptimize(hit);
    if (++i == rays.size()) i = 0;
  }
  const double n = double(state.iterations());
  state.SetItemsProcessed(state.iterations());
  state.counters["rays_per_second"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["terrain_hit_fraction"] = double(terrain_hits) / n;
  state.counters["body_hit_fraction"] = double(body_hits) / n;
  state.counters["body_nodes_per_ray"] = double(body_stats.nodes_visited) / n;
  state.counters["parts_per_ray"] = double(body_stats.parts_tested) / n;
  state.counters["bodies"] = double(bodies.body_count());
  state.counters["rays"] = double(rays.size());
}
BENCHMARK(BM_WorldRaycastBodies)
    ->ArgsProduct({{8, 64, 512}, {-1, 0, 1000}, {0, 1}})
    ->ArgNames({"length", "bodies", "air"});

}  // namespace
}  // namespace voxcol::bench
