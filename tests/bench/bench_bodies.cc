// Bodies with tick history (issue 42): the per-tick update and raycasts against 1,000 walking
// humanoids (5 parts each), voxcol's BodyWorld against Bullet's btDbvt on the same bodies and rays.
//
// - BM_UpdateBodies/N: one tick batch moving all N bodies (history kept, 60 ticks); us_per_tick.
// - BM_BodiesRaycast/N: closest hit at the latest tick; BM_BodiesRaycastPast/N/k: k ticks back.
// - BM_BulletDbvtRaycast/N: the same rays through a btDbvt holding the same bodies' boxes, after
//   the same ticks of incremental updates (btDbvt::update with velocity and margin, one
//   optimizeIncremental pass per tick as btDbvtBroadphase does); each leaf the ray reaches runs the
//   same part tests (RayVsShape) with the closest distance so far. btDbvt's ray walk cannot shorten
//   its ray after a hit: that is part of what is measured.
// - BM_BulletDbvtUpdate/N: Bullet's tree update for the same moves, without any history.
// Counters divide by CPU time.
#include <BulletCollision/BroadphaseCollision/btDbvt.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "core/bodies/body_world.h"
#include "core/bodies/ray_vs_shape.h"

namespace voxcol::bench {
namespace {

constexpr int kFrames = 240;     // the walk repeats every 240 ticks (4 s at 60 Hz)
constexpr int kWarmTicks = 120;  // ticks applied before timing: the history is full
constexpr float kRayLength = 100;

std::vector<BodyPartDesc> Humanoid() {
  std::vector<BodyPartDesc> parts(5);
  parts[0] = {1, MakeSphere(0.15f), {Quat{}, {0, 1.65f, 0}}};
  parts[1] = {2, MakeCapsule(0.3f, 0.22f), {Quat{}, {0, 1.1f, 0}}};
  parts[2] = {3, MakeBox({0.06f, 0.3f, 0.06f}), {Quat{}, {-0.32f, 1.1f, 0}}};
  parts[3] = {4, MakeBox({0.06f, 0.3f, 0.06f}), {Quat{}, {0.32f, 1.1f, 0}}};
  parts[4] = {5, MakeCapsule(0.35f, 0.12f), {Quat{}, {0, 0.45f, 0}}};
  return parts;
}

// N humanoids walking circles of radius 2-4 m (3-6 m/s at 60 Hz) around random centres in a
// 200 m square, facing along their motion; frame f holds every body's pose at tick f (mod 240).
struct BodyScene {
  std::vector<BodyPartDesc> parts = Humanoid();
  std::vector<std::vector<RigidTransform>> frames;
  std::vector<BodyBatch> moves;  // one batch per frame (tick set when applied)
  std::vector<BodyRaycastInput> rays;

  explicit BodyScene(int n) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> centre(-100, 100), radius(2, 4), phase(0, 6.2831853f);
    const size_t count = static_cast<size_t>(n);
    std::vector<Vec3> centres(count);
    std::vector<float> radii(count), phases(count);
    for (size_t i = 0; i < count; ++i) {
      centres[i] = {centre(rng), 0, centre(rng)};
      radii[i] = radius(rng);
      phases[i] = phase(rng);
    }
    frames.assign(kFrames, std::vector<RigidTransform>(size_t(n)));
    moves.resize(kFrames);
    for (int f = 0; f < kFrames; ++f) {
      for (int i = 0; i < n; ++i) {
        const float a = phases[i] + 6.2831853f * float(f) / kFrames;
        const Vec3 at = centres[i] + Vec3{std::cos(a), 0, std::sin(a)} * radii[i];
        frames[f][i] = {Quat::FromAxisAngle({0, 1, 0}, -a), at};
        moves[f].move.push_back({BodyId(i), frames[f][i]});
      }
    }
    // Shots from head height in the square, nearly horizontal.
    std::uniform_real_distribution<float> unit(-1, 1), height(1.0f, 1.8f);
    for (int r = 0; r < 4096; ++r) {
      const Vec3 o{centre(rng), height(rng), centre(rng)};
      const Vec3 d = Normalize(Vec3{unit(rng), unit(rng) * 0.05f, unit(rng)});
      rays.push_back({o, d, kRayLength, 0});
    }
  }

  // A world with every body created at tick 0 and `ticks` more ticks applied.
  std::unique_ptr<BodyWorld> MakeWorld(int ticks) const {
    auto world = std::make_unique<BodyWorld>();
    BodyBatch create;
    for (size_t i = 0; i < frames[0].size(); ++i) {
      create.create.push_back({BodyId(i), 0, 1, frames[0][i], parts});
    }
    if (!world->Apply(create).ok()) return nullptr;
    for (int t = 1; t <= ticks; ++t) {
      BodyBatch b = moves[size_t(t % kFrames)];
      b.tick = t;
      if (!world->Apply(b).ok()) return nullptr;
    }
    return world;
  }
};

const BodyScene& Scene(int n) {
  static std::unique_ptr<BodyScene> scene;
  if (!scene || int(scene->frames[0].size()) != n) scene = std::make_unique<BodyScene>(n);
  return *scene;
}

void BM_UpdateBodies(benchmark::State& state) {
  const BodyScene& scene = Scene(int(state.range(0)));
  std::unique_ptr<BodyWorld> world = scene.MakeWorld(kWarmTicks);
  std::vector<BodyBatch> moves = scene.moves;
  int64_t tick = kWarmTicks;
  for (auto _ : state) {
    ++tick;
    BodyBatch& b = moves[size_t(tick % kFrames)];
    b.tick = tick;
    if (!world->Apply(b).ok()) state.SkipWithError("Apply failed");
  }
  const double n = double(state.iterations());
  state.counters["us_per_tick"] =
      benchmark::Counter(n * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["bodies"] = double(world->body_count());
  state.counters["tree_height"] = double(world->tree().Height());
  state.counters["history_mib"] = double(world->history_bytes()) / (1 << 20);
}
BENCHMARK(BM_UpdateBodies)->Arg(1000);

void SetRayCounters(benchmark::State& state, size_t hits, const BodyQueryStats& stats) {
  const double n = double(state.iterations());
  state.counters["rays_per_second"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.counters["hit_fraction"] = double(hits) / n;
  state.counters["nodes_per_ray"] = double(stats.nodes_visited) / n;
  state.counters["bodies_per_ray"] = double(stats.bodies_tested) / n;
  state.counters["parts_per_ray"] = double(stats.parts_tested) / n;
}

void TimeBodyRays(benchmark::State& state, int ticks_back) {
  const BodyScene& scene = Scene(int(state.range(0)));
  static std::unique_ptr<BodyWorld> world;
  if (!world) world = scene.MakeWorld(kWarmTicks);
  std::vector<BodyRaycastInput> rays = scene.rays;
  for (BodyRaycastInput& r : rays) r.tick = kWarmTicks - ticks_back;
  BodyQueryStats stats;
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    absl::StatusOr<BodyRayHit> hit = world->Raycast(rays[i], {}, &stats);
    hits += hit.ok() && hit->hit;
    benchmark::DoNotOptimize(hit);
    if (++i == rays.size()) i = 0;
  }
  SetRayCounters(state, hits, stats);
}

void BM_BodiesRaycast(benchmark::State& state) { TimeBodyRays(state, 0); }
BENCHMARK(BM_BodiesRaycast)->Arg(1000);

void BM_BodiesRaycastPast(benchmark::State& state) { TimeBodyRays(state, int(state.range(1))); }
BENCHMARK(BM_BodiesRaycastPast)->Args({1000, 1})->Args({1000, 30})->Args({1000, 59});

// World box of a body at a pose, from its parts (the same boxes BodyWorld computes).
btDbvtVolume BodyVolume(const std::vector<BodyPartDesc>& parts, const RigidTransform& pose) {
  Aabb box;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Aabb b = TransformBox(parts[i].shape.LocalBounds(), pose * parts[i].local);
    box = i == 0 ? b : Union(box, b);
  }
  return btDbvtVolume::FromMM({box.min.x, box.min.y, box.min.z}, {box.max.x, box.max.y, box.max.z});
}

// The Bullet peer: one btDbvt leaf per body, built and updated through the same ticks.
struct BulletBodies {
  btDbvt tree;
  std::vector<btDbvtNode*> leaves;
  // Each body owns its parts, as each BodyWorld body does (and as a Bullet user's compound shape
  // per body would): one shared array would sit in L1 for every ray and flatter the peer.
  std::vector<std::vector<BodyPartDesc>> parts;
  const std::vector<RigidTransform>* poses = nullptr;  // the latest frame

  void Tick(const BodyScene& scene, int t) {
    const std::vector<RigidTransform>& frame = scene.frames[size_t(t % kFrames)];
    const std::vector<RigidTransform>& prev = scene.frames[size_t((t + kFrames - 1) % kFrames)];
    for (size_t i = 0; i < leaves.size(); ++i) {
      btDbvtVolume v = BodyVolume(scene.parts, frame[i]);
      const Vec3 d = frame[i].translation - prev[i].translation;
      tree.update(leaves[i], v, btVector3(d.x, d.y, d.z), btScalar(0.1));
    }
    tree.optimizeIncremental(1);
    poses = &frame;
  }
};

std::unique_ptr<BulletBodies> MakeBullet(const BodyScene& scene, int ticks) {
  auto b = std::make_unique<BulletBodies>();
  for (size_t i = 0; i < scene.frames[0].size(); ++i) {
    b->leaves.push_back(
        b->tree.insert(BodyVolume(scene.parts, scene.frames[0][i]), reinterpret_cast<void*>(i)));
    b->parts.push_back(scene.parts);
  }
  b->poses = &scene.frames[0];
  for (int t = 1; t <= ticks; ++t) b->Tick(scene, t);
  return b;
}

// Leaf callback: the exact part tests of one body, keeping the closest hit.
struct ClosestPart : btDbvt::ICollide {
  const std::vector<std::vector<BodyPartDesc>>* body_parts;
  const std::vector<RigidTransform>* poses;
  BodyRaycastInput ray;
  float best = 0;
  bool hit = false;
  int64_t bodies = 0, parts = 0;
  void Process(const btDbvtNode* leaf) override {
    const size_t i = reinterpret_cast<size_t>(leaf->data);
    ++bodies;
    for (const BodyPartDesc& p : (*body_parts)[i]) {
      ++parts;
      const ShapeRayHit h =
          RayVsShape(ray.origin, ray.direction, best, p.shape, (*poses)[i] * p.local);
      if (h.hit && (!hit || h.t < best)) best = h.t, hit = true;
    }
  }
};

void BM_BulletDbvtRaycast(benchmark::State& state) {
  const BodyScene& scene = Scene(int(state.range(0)));
  static std::unique_ptr<BulletBodies> bullet;
  if (!bullet) bullet = MakeBullet(scene, kWarmTicks);
  btAlignedObjectArray<const btDbvtNode*> stack;
  ClosestPart collide;
  collide.body_parts = &bullet->parts;
  collide.poses = bullet->poses;
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const BodyRaycastInput& r = scene.rays[i];
    const btVector3 from(r.origin.x, r.origin.y, r.origin.z);
    const btVector3 dir(r.direction.x, r.direction.y, r.direction.z);
    const btVector3 to = from + dir * r.max_distance;
    const btVector3 inv(dir[0] == 0 ? btScalar(BT_LARGE_FLOAT) : 1 / dir[0],
                        dir[1] == 0 ? btScalar(BT_LARGE_FLOAT) : 1 / dir[1],
                        dir[2] == 0 ? btScalar(BT_LARGE_FLOAT) : 1 / dir[2]);
    unsigned signs[3] = {inv[0] < 0, inv[1] < 0, inv[2] < 0};
    collide.ray = r;
    collide.best = r.max_distance;
    collide.hit = false;
    bullet->tree.rayTestInternal(bullet->tree.m_root, from, to, inv, signs, r.max_distance,
                                 btVector3(0, 0, 0), btVector3(0, 0, 0), stack, collide);
    hits += collide.hit;
    benchmark::DoNotOptimize(collide.best);
    if (++i == scene.rays.size()) i = 0;
  }
  BodyQueryStats stats;
  stats.bodies_tested = collide.bodies;
  stats.parts_tested = collide.parts;
  SetRayCounters(state, hits, stats);
}
BENCHMARK(BM_BulletDbvtRaycast)->Arg(1000);

void BM_BulletDbvtUpdate(benchmark::State& state) {
  const BodyScene& scene = Scene(int(state.range(0)));
  std::unique_ptr<BulletBodies> bullet = MakeBullet(scene, kWarmTicks);
  int t = kWarmTicks;
  for (auto _ : state) bullet->Tick(scene, ++t);
  const double n = double(state.iterations());
  state.counters["us_per_tick"] =
      benchmark::Counter(n * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_BulletDbvtUpdate)->Arg(1000);

}  // namespace
}  // namespace voxcol::bench
