// BM_MoveCharacters/N: N capsule characters walking and jumping on the cave world, one
// MoveCharacters request per tick through RunMoveCharacters (the function the server's unary RPC
// and Query batches call: wire decoding, validation, the core controller, wire encoding), one
// thread.
//
// Characters start on walkable top ground found by smooth raycasts straight down from the sky.
// Each walks at 4 units/s in its own direction (turned by a fixed angle every 2 s and reversed at
// the world's edge), jumps every 1.5 s when on ground (7 units/s up) and falls under gravity
// (20 units/s^2), at 60 ticks/s. Every kCycle ticks all characters go back to their start, so the
// timed ticks repeat the warm-up cycle's paths: every chunk they touch is meshed before timing
// (cache_builds reports builds while timing; 0 when warm).
//
// BM_MoveCharactersMeeting/n/meet/bodies: the core MoveCharacters, no wire: n/2 pairs on walkable
// ground 3 apart walk toward each other (meet = 1: they meet within a few ticks and push against
// each other for the rest of the cycle) or away (meet = 0: no character near another). bodies = 1
// calls MoveCharacters with bodies (characters collide with each other and with the n/2 crates of
// a BodyWorld, 2 m beside the first walker's start), bodies = 2 the same without a BodyWorld
// (characters only), bodies = 0 the terrain-only MoveCharacters on the same scene: /0/2 - /0/0 is
// the cost of the crowd broadphase when no character is near another.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/bodies/body_world.h"
#include "core/query/character.h"
#include "server/exec/query_ops.h"
#include "tests/bench/bench_scenes.h"

namespace voxcol::bench {
namespace {

constexpr float kDt = 1.0f / 60;
constexpr float kSpeed = 4;
constexpr float kJumpSpeed = 7;
constexpr float kGravity = 20;
constexpr int kJumpEvery = 90;   // ticks
constexpr int kTurnEvery = 120;  // ticks
constexpr int kCycle = 600;      // ticks: 10 s of play, then every character restarts
constexpr float kRadius = 0.4f;
constexpr float kHalfHeight = 0.5f;

struct Walker {
  Vec3 start;
  float start_heading = 0;  // radians about +Y
  Vec3 position;
  float heading = 0;
  float vy = 0;  // vertical speed, units/s
  bool on_ground = false;
};

std::vector<Walker> PlaceWalkers(int count) {
  const World& world = BenchCaveWorld();
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  const Aabb b = world.world_bounds();
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> ux(b.min.x + 8, b.max.x - 8), uz(b.min.z + 8, b.max.z - 8),
      angle(0, 6.2831853f);
  std::vector<Walker> walkers;
  while (int(walkers.size()) < count) {
    RaycastInput ray{{ux(rng), b.max.y - 1, uz(rng)}, {0, -1, 0}, b.max.y - b.min.y - 2};
    RaycastHit hit = Raycast(index, cache, ray, RaycastSettings{});
    if (!hit.hit || hit.started_inside || hit.normal.y < 0.85f) continue;
    Walker w;
    w.start = hit.position + Vec3{0, kRadius + kHalfHeight + 0.05f, 0};
    w.start_heading = angle(rng);
    walkers.push_back(w);
  }
  return walkers;
}

void Restart(std::vector<Walker>* walkers) {
  for (Walker& w : *walkers) {
    w.position = w.start;
    w.heading = w.start_heading;
    w.vy = 0;
    w.on_ground = false;
  }
}

// Fills the request's moves for tick `tick` of the cycle.
void PlanTick(const std::vector<Walker>& walkers, int tick, v1::MoveCharactersRequest* request) {
  for (size_t i = 0; i < walkers.size(); ++i) {
    const Walker& w = walkers[i];
    float vy = w.vy;
    if (w.on_ground && (tick + int(i)) % kJumpEvery == 0) vy = kJumpSpeed;
    v1::CharacterMove* move = request->mutable_moves(int(i));
    v1::Vec3* p = move->mutable_position();
    p->set_x(w.position.x);
    p->set_y(w.position.y);
    p->set_z(w.position.z);
    v1::Vec3* d = move->mutable_displacement();
    d->set_x(std::cos(w.heading) * kSpeed * kDt);
    d->set_y(vy * kDt);
    d->set_z(std::sin(w.heading) * kSpeed * kDt);
  }
}

// Takes the results of a tick: new positions, ground, gravity, turns.
void ApplyTick(const v1::MoveCharactersRequest& request, const v1::MoveCharactersResponse& response,
               int tick, const Aabb& bounds, std::vector<Walker>* walkers) {
  for (size_t i = 0; i < walkers->size(); ++i) {
    Walker& w = (*walkers)[i];
    const v1::CharacterResult& r = response.results(int(i));
    w.position = Vec3{r.position().x(), r.position().y(), r.position().z()};
    w.on_ground = r.ground() == v1::GROUND_STATE_ON_GROUND;
    const float planned = request.moves(int(i)).displacement().y() / kDt;
    if (w.on_ground && planned <= 0) {
      w.vy = 0;
    } else if (r.collision_flags() & v1::CHARACTER_COLLISION_UP) {
      w.vy = std::min(planned, 0.0f) - kGravity * kDt;
    } else {
      w.vy = planned - kGravity * kDt;
    }
    if ((tick + int(i)) % kTurnEvery == 0) w.heading += 2.4f;
    const Vec3& p = w.position;
    if (p.x < bounds.min.x + 6 || p.x > bounds.max.x - 6 || p.z < bounds.min.z + 6 ||
        p.z > bounds.max.z - 6) {
      w.heading += 3.14159265f;  // turn back from the edge
    }
    if (p.y < bounds.min.y + 4) w.position = w.start;  // fell through a hole to the bottom
  }
}

void BM_MoveCharacters(benchmark::State& state) {
  const int n = int(state.range(0));
  server::QueryEngine engine{BenchCaveIndex(), BenchCaveCache()};
  server::ServiceLimits limits;
  const Aabb bounds = BenchCaveWorld().world_bounds();
  std::vector<Walker> walkers = PlaceWalkers(n);
  v1::MoveCharactersRequest request;
  request.set_include_stats(true);
  for (int i = 0; i < n; ++i) {
    v1::CharacterMove* move = request.add_moves();
    move->set_client_id(uint64_t(i));
    move->set_radius(kRadius);
    move->set_half_height(kHalfHeight);
  }
  v1::MoveCharactersResponse response;
  auto tick = [&](int t) {
    PlanTick(walkers, t, &request);
    response.Clear();
    absl::Status status = server::RunMoveCharacters(engine, limits, request, &response);
    if (!status.ok()) state.SkipWithError(std::string(status.message()).c_str());
    if (status.ok()) ApplyTick(request, response, t, bounds, &walkers);
    return status.ok();
  };
  Restart(&walkers);
  for (int t = 0; t < kCycle; ++t) {  // warm: one whole cycle
    if (!tick(t)) return;
  }
  Restart(&walkers);
  int t = 0;
  uint64_t cache_builds = 0, on_ground = 0, airborne = 0;
  for (auto _ : state) {
    if (!tick(t)) break;
    cache_builds += response.stats().cache_builds();
    for (const v1::CharacterResult& r : response.results()) {
      on_ground += r.ground() == v1::GROUND_STATE_ON_GROUND;
      airborne += r.ground() == v1::GROUND_STATE_AIRBORNE;
    }
    if (++t == kCycle) {
      t = 0;
      Restart(&walkers);
    }
  }
  const double moves = double(state.iterations()) * n;
  state.SetItemsProcessed(int64_t(moves));
  // CPU seconds / (moves * 1e-6): microseconds of CPU per character-tick (kIsRate divides by the
  // benchmark's CPU time, not wall time).
  state.counters["us_per_character"] =
      benchmark::Counter(moves * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["on_ground"] = double(on_ground) / moves;
  state.counters["airborne"] = double(airborne) / moves;
  state.counters["cache_builds"] = double(cache_builds);
}
BENCHMARK(BM_MoveCharacters)->Arg(256)->Unit(benchmark::kMillisecond);

// Pairs of walkers on walkable ground about 3 apart, each heading toward the other (meet) or
// away; crates (1 m boxes) on walkable ground elsewhere.
constexpr int kPairCycle = 300;  // ticks: 5 s, then every pair restarts

struct PairScene {
  std::vector<Walker> walkers;
  BodyWorld crates;
};

bool GroundAt(float x, float z, Vec3* foot) {
  const Aabb b = BenchCaveWorld().world_bounds();
  RaycastInput ray{{x, b.max.y - 1, z}, {0, -1, 0}, b.max.y - b.min.y - 2};
  RaycastHit hit = Raycast(BenchCaveIndex(), BenchCaveCache(), ray, RaycastSettings{});
  if (!hit.hit || hit.started_inside || hit.normal.y < 0.85f) return false;
  *foot = hit.position;
  return true;
}

void PlacePairs(int count, bool meet, PairScene* scene) {
  std::vector<Walker> singles = PlaceWalkers(count);  // the first of each pair, and crate spots
  for (int i = 0; i + 1 < count; i += 2) {
    const Walker& a = singles[i];
    const Vec3 dir(std::cos(a.start_heading), 0, std::sin(a.start_heading));
    Vec3 foot;
    Walker w1 = a, w2 = a;
    // The partner 3 ahead on the ground there, or 1 above the first's height (it then falls).
    w2.start = GroundAt(a.start.x + 3 * dir.x, a.start.z + 3 * dir.z, &foot)
                   ? foot + Vec3{0, kRadius + kHalfHeight + 0.05f, 0}
                   : a.start + dir * 3 + Vec3{0, 1, 0};
    w1.start_heading = meet ? a.start_heading : a.start_heading + 3.14159265f;
    w2.start_heading = meet ? a.start_heading + 3.14159265f : a.start_heading;
    scene->walkers.push_back(w1);
    scene->walkers.push_back(w2);
  }
  BodyBatch batch;
  batch.tick = 1;
  for (int i = 1; i < count; i += 2) {  // crates at the unused spots, 2 m off the path
    const Vec3 p = singles[i].start + Vec3{0, 0.5f - kRadius - kHalfHeight, 2};
    batch.create.push_back(
        {BodyId(100000 + i), 0, 1, {Quat(), p}, {{0, MakeBox({0.5f, 0.5f, 0.5f}), {}}}});
  }
  if (!scene->crates.Apply(batch).ok()) std::abort();
}

void BM_MoveCharactersMeeting(benchmark::State& state) {
  const int n = int(state.range(0));
  const bool meet = state.range(1) != 0;
  const int64_t mode = state.range(2);  // 0: terrain only, 1: with bodies, 2: characters only
  PairScene scene;
  PlacePairs(n, meet, &scene);
  std::vector<Walker>& walkers = scene.walkers;
  const CharacterBodies bodies{mode == 1 ? &scene.crates : nullptr, 1, {}};
  std::vector<CharacterMove> moves(walkers.size());
  std::vector<CharacterResult> results;
  uint64_t blocked = 0, on_ground = 0;
  QueryStats stats;
  auto tick = [&]() {
    for (size_t i = 0; i < walkers.size(); ++i) {
      Walker& w = walkers[i];
      CharacterMove& m = moves[i];
      m.id = BodyId(i);
      m.radius = kRadius;
      m.half_height = kHalfHeight;
      m.position = w.position;
      m.displacement = {std::cos(w.heading) * kSpeed * kDt, w.vy * kDt,
                        std::sin(w.heading) * kSpeed * kDt};
    }
    if (mode != 0) {
      MoveCharacters(BenchCaveIndex(), BenchCaveCache(), moves, bodies, nullptr, &results, &stats);
    } else {
      MoveCharacters(BenchCaveIndex(), BenchCaveCache(), moves, nullptr, &results, &stats);
    }
    for (size_t i = 0; i < walkers.size(); ++i) {
      Walker& w = walkers[i];
      const CharacterResult& r = results[i];
      w.position = r.position;
      w.on_ground = r.ground == GroundState::kOnGround;
      w.vy = w.on_ground ? 0 : w.vy - kGravity * kDt;
      blocked += (r.collisions & kCollisionSides) != 0;
      on_ground += w.on_ground;
    }
  };
  Restart(&walkers);
  for (int t = 0; t < kPairCycle; ++t) tick();  // warm: one whole cycle
  Restart(&walkers);
  blocked = on_ground = 0;
  stats = QueryStats{};
  int t = 0;
  for (auto _ : state) {
    tick();
    if (++t == kPairCycle) {
      t = 0;
      Restart(&walkers);
    }
  }
  const double character_ticks = double(state.iterations()) * double(walkers.size());
  state.counters["us_per_character"] = benchmark::Counter(
      character_ticks * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["blocked"] = double(blocked) / character_ticks;
  state.counters["on_ground"] = double(on_ground) / character_ticks;
  state.counters["cache_builds"] = double(stats.cache_builds);
}
BENCHMARK(BM_MoveCharactersMeeting)
    ->Args({256, 1, 1})
    ->Args({256, 0, 1})
    ->Args({256, 0, 0})
    ->Args({256, 1, 0})
    ->Args({256, 0, 2})
    ->ArgNames({"n", "meet", "bodies"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace voxcol::bench
