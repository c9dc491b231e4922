// Raycasts against bodies: the closest part against an independent double-precision oracle over
// every part (brute force), a moving capsule at two ticks, past ticks against brute force over the
// poses the test recorded, filters, and Overlap against brute-force GJK.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "core/bodies/body_world.h"
#include "core/bodies/ray_vs_shape.h"
#include "core/narrowphase/gjk.h"
#include "tests/core/bodies/body_test_util.h"

namespace voxcol {
namespace {

using test::HumanoidParts;
using test::OracleRayPart;
using test::RandomRotation;

BodyDesc Body(BodyId id, const Vec3& at, std::vector<BodyPartDesc> parts, uint32_t layer = 1) {
  BodyDesc b;
  b.id = id;
  b.layer = layer;
  b.pose = {Quat{}, at};
  b.parts = std::move(parts);
  return b;
}

TEST(BodyRaycast, MovingCapsuleHitAtItsTickAndMissedTenTicksLater) {
  BodyWorld world;
  BodyBatch first;
  first.tick = 100;
  first.create.push_back(Body(7, {0, 1, 0}, {{3, MakeCapsule(0.5f, 0.3f), {}}}));
  ASSERT_TRUE(world.Apply(first).ok());
  for (int64_t t = 101; t <= 110; ++t) {  // walks +0.2 per tick along x: 2 units by tick 110
    BodyBatch b;
    b.tick = t;
    b.move.push_back({7, {Quat{}, {0.2f * float(t - 100), 1, 0}}});
    ASSERT_TRUE(world.Apply(b).ok());
  }
  // A ray along +z through where the capsule stood at tick 100.
  BodyRaycastInput ray{{0, 1, -10}, {0, 0, 1}, 100, 100};
  absl::StatusOr<BodyRayHit> at_t = world.Raycast(ray, {});
  ASSERT_TRUE(at_t.ok()) << at_t.status();
  ASSERT_TRUE(at_t->hit);
  EXPECT_EQ(at_t->body_id, 7u);
  EXPECT_EQ(at_t->part_id, 3u);
  EXPECT_NEAR(at_t->distance, 9.7f, 1e-4f);
  EXPECT_NEAR(at_t->normal.z, -1, 1e-4f);
  ray.tick = 110;
  absl::StatusOr<BodyRayHit> later = world.Raycast(ray, {});
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->hit);
  // Where it stands at 110, it is hit.
  ray.origin = {2, 1, -10};
  later = world.Raycast(ray, {});
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(later->hit);
  // Each tick in between sees it at that tick's position: the ray at x = 0.2 * k hits at tick
  // 100 + k and misses 3 ticks later (0.6 > radius 0.3).
  for (int k = 0; k + 3 <= 10; ++k) {
    BodyRaycastInput r{{0.2f * float(k), 1, -10}, {0, 0, 1}, 100, 100 + k};
    EXPECT_TRUE(world.Raycast(r, {})->hit) << k;
    r.tick += 3;
    EXPECT_FALSE(world.Raycast(r, {})->hit) << k;
  }
}

// Random humanoids and rotated boxes; thousands of rays aimed near them. The hit must be the part
// the oracle finds first over all parts of all bodies, at the oracle's distance.
TEST(BodyRaycast, ClosestPartEqualsBruteForceOracle) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pos(-6, 6), unit(-1, 1), size(0.1f, 0.6f);
  BodyWorld world;
  BodyBatch batch;
  batch.tick = 1;
  for (BodyId id = 1; id <= 40; ++id) {
    BodyDesc b = Body(id, {pos(rng), pos(rng), pos(rng)}, HumanoidParts());
    b.pose.rotation = RandomRotation(rng);
    // A sixth part of random size and rotation: a prop-like box or capsule.
    const ConvexShape extra =
        id % 2 ? MakeBox({size(rng), size(rng), size(rng)}) : MakeCapsule(size(rng), size(rng));
    b.parts.push_back({9, extra, {RandomRotation(rng), {unit(rng), unit(rng), unit(rng)}}});
    batch.create.push_back(b);
  }
  ASSERT_TRUE(world.Apply(batch).ok());
  int hits = 0, misses = 0, grazes = 0, wrong = 0;
  for (int i = 0; i < 4000; ++i) {
    const BodyDesc& target = batch.create[rng() % batch.create.size()];
    const Vec3 o{pos(rng) * 2, pos(rng) * 2, pos(rng) * 2};
    const Vec3 aim = target.pose.translation + Vec3{unit(rng), unit(rng), unit(rng)} * 0.6f;
    const Vec3 d = Normalize(aim - o);
    const float max_t = rng() % 4 == 0 ? Length(aim - o) * 0.8f : 40.0f;
    // Brute force over every part of every body.
    test::OracleHit best;
    BodyPartRef best_ref;
    bool graze = false;
    std::map<std::pair<BodyId, uint32_t>, double> part_t;
    for (const BodyDesc& b : batch.create) {
      for (const BodyPartDesc& p : b.parts) {
        const test::OracleHit h = OracleRayPart(o, d, max_t, p.shape, b.pose, p.local);
        graze |= std::fabs(h.min_distance) < 1e-4;
        if (h.hit) part_t[{b.id, p.part_id}] = h.t;
        if (h.hit && (!best.hit || h.t < best.t)) best = h, best_ref = {b.id, p.part_id};
      }
    }
    absl::StatusOr<BodyRayHit> got = world.Raycast({o, d, max_t, 1}, {});
    ASSERT_TRUE(got.ok());
    if (graze) {
      ++grazes;  // a ray tangent to some part within 1e-4: float and double may disagree
      continue;
    }
    ASSERT_EQ(got->hit, best.hit) << "ray " << i;
    if (!best.hit) {
      ++misses;
      continue;
    }
    ++hits;
    EXPECT_NEAR(got->distance, best.t, 2e-4) << "ray " << i;
    // The reported part is the first one the ray meets (or ties with it within tolerance).
    if (!(BodyPartRef{got->body_id, got->part_id} == best_ref)) {
      auto it = part_t.find({got->body_id, got->part_id});
      if (it == part_t.end() || std::fabs(it->second - best.t) > 2e-4) ++wrong;
    }
  }
  std::printf("closest part vs oracle: %d hits, %d misses, %d grazes skipped, %d wrong parts\n",
              hits, misses, grazes, wrong);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(hits, 1500);
  EXPECT_GT(misses, 200);
  EXPECT_LT(grazes, 40);  // under 1%
}

// Closed forms vs oracle for each shape alone, including rays that start inside.
TEST(BodyRaycast, ShapeClosedFormsEqualOracle) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1, 1), size(0.1f, 2.0f);
  int checked = 0;
  for (int i = 0; i < 6000; ++i) {
    const int kind = i % 3;
    const ConvexShape s = kind == 0   ? MakeSphere(size(rng))
                          : kind == 1 ? MakeCapsule(size(rng), size(rng))
                                      : MakeBox({size(rng), size(rng), size(rng)});
    const RigidTransform pose{RandomRotation(rng), {unit(rng), unit(rng), unit(rng)}};
    const Vec3 o = Vec3{unit(rng), unit(rng), unit(rng)} * 4;
    const Vec3 d = Normalize(pose.translation + Vec3{unit(rng), unit(rng), unit(rng)} - o);
    const ShapeRayHit h = RayVsShape(o, d, 10, s, pose);
    const test::OracleHit w = OracleRayPart(o, d, 10, s, {}, pose);
    if (std::fabs(w.min_distance) < 1e-4) continue;
    ++checked;
    ASSERT_EQ(h.hit, w.hit) << "case " << i << " kind " << kind;
    if (!h.hit) continue;
    EXPECT_NEAR(h.t, w.t, 2e-4) << "case " << i << " kind " << kind;
    EXPECT_NEAR(Length(h.normal), 1, 1e-4);
    if (w.t > 0) {
      EXPECT_LT(Dot(h.normal, d), 0) << "case " << i;  // faces the ray
    }
  }
  EXPECT_GT(checked, 5800);
}

// The bodies of a random run (walks, teleports, creations, removals); at random past ticks of the
// window the query equals brute force over the poses the test recorded for that tick.
TEST(BodyRaycast, PastTicksEqualBruteForceOverRecordedPoses) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> pos(-20, 20), unit(-1, 1);
  BodyLimits limits;
  limits.history_ticks = 30;
  BodyWorld world(limits);
  std::map<int64_t, std::map<BodyId, RigidTransform>> recorded;  // tick -> live bodies' poses
  std::map<BodyId, RigidTransform> live;
  const std::vector<BodyPartDesc> parts = HumanoidParts();
  BodyId next_id = 1;
  int compared = 0, hits = 0;
  for (int64_t tick = 10; tick < 130; tick += 1 + int64_t(rng() % 2)) {
    BodyBatch b;
    b.tick = tick;
    for (auto& [id, pose] : live) {
      const int what = int(rng() % 40);
      if (what == 0) {
        b.remove.push_back(id);
        continue;
      }
      const Vec3 step =
          what == 1 ? Vec3{pos(rng), 0, pos(rng)} : Vec3{unit(rng), 0, unit(rng)} * 0.1f;
      pose = {RandomRotation(rng), pose.translation + step};
      b.move.push_back({id, pose});
    }
    for (BodyId id : b.remove) live.erase(id);
    while (live.size() < 60) {
      BodyDesc d = Body(next_id++, {pos(rng), 0, pos(rng)}, parts);
      b.create.push_back(d);
      live[d.id] = d.pose;
    }
    ASSERT_TRUE(world.Apply(b).ok());
    recorded[tick] = live;
    for (int r = 0; r < 40; ++r) {
      // A recorded tick of the window (ticks between batches keep the earlier batch's poses).
      const int64_t t =
          world.oldest_tick() + int64_t(rng() % uint32_t(tick - world.oldest_tick() + 1));
      const auto& poses = std::prev(recorded.upper_bound(t))->second;
      const Vec3 o{pos(rng), unit(rng), pos(rng)};
      const Vec3 d = Normalize(Vec3{unit(rng), unit(rng) * 0.05f, unit(rng)});
      BodyRayHit want;
      for (const auto& [id, pose] : poses) {
        for (const BodyPartDesc& p : parts) {
          const ShapeRayHit h = RayVsShape(o, d, 50, p.shape, pose * p.local);
          if (h.hit && (!want.hit || h.t < want.distance))
            want = {true, id, p.part_id, h.t, {}, {}};
        }
      }
      absl::StatusOr<BodyRayHit> got = world.Raycast({o, d, 50, t}, {});
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->hit, want.hit) << "tick " << t << " latest " << tick;
      ++compared;
      if (!want.hit) continue;
      ++hits;
      EXPECT_EQ(got->body_id, want.body_id);
      EXPECT_EQ(got->part_id, want.part_id);
      EXPECT_FLOAT_EQ(got->distance, want.distance);
    }
  }
  EXPECT_GT(compared, 2000);
  EXPECT_GT(hits, 300);
}

TEST(BodyRaycast, FiltersSkipLayersAndIgnoredIds) {
  BodyWorld world;
  BodyBatch b;
  b.tick = 1;
  b.create.push_back(Body(1, {0, 0, 2}, {{1, MakeSphere(0.5f), {}}}, /*layer=*/1));
  b.create.push_back(Body(2, {0, 0, 4}, {{1, MakeSphere(0.5f), {}}}, /*layer=*/2));
  b.create.push_back(Body(3, {0, 0, 6}, {{1, MakeSphere(0.5f), {}}}, /*layer=*/2));
  ASSERT_TRUE(world.Apply(b).ok());
  const BodyRaycastInput ray{{0, 0, 0}, {0, 0, 1}, 100, 1};
  EXPECT_EQ(world.Raycast(ray, {})->body_id, 1u);
  EXPECT_EQ(world.Raycast(ray, {2u, {}})->body_id, 2u);
  const std::vector<BodyId> ignore{2};
  EXPECT_EQ(world.Raycast(ray, {2u, ignore})->body_id, 3u);
  EXPECT_FALSE(world.Raycast(ray, {4u, {}})->hit);
  // max_distance clips: the caller passes the terrain hit distance.
  EXPECT_FALSE(world.Raycast({{0, 0, 0}, {0, 0, 1}, 1.4f, 1}, {})->hit);
  EXPECT_TRUE(world.Raycast({{0, 0, 0}, {0, 0, 1}, 1.6f, 1}, {})->hit);
}

TEST(BodyOverlap, EqualsBruteForceGjkAtPastTicks) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> pos(-8, 8), unit(-1, 1);
  BodyWorld world;
  std::map<int64_t, std::map<BodyId, RigidTransform>> recorded;
  const std::vector<BodyPartDesc> parts = HumanoidParts();
  std::map<BodyId, RigidTransform> live;
  int compared = 0, nonempty = 0;
  for (int64_t tick = 1; tick <= 40; ++tick) {
    BodyBatch b;
    b.tick = tick;
    if (tick == 1) {
      for (BodyId id = 1; id <= 50; ++id) {
        b.create.push_back(Body(id, {pos(rng), pos(rng), pos(rng)}, parts));
        live[id] = b.create.back().pose;
      }
    } else {
      for (auto& [id, pose] : live) {
        pose = {RandomRotation(rng),
                pose.translation + Vec3{unit(rng), unit(rng), unit(rng)} * 0.3f};
        b.move.push_back({id, pose});
      }
    }
    ASSERT_TRUE(world.Apply(b).ok());
    recorded[tick] = live;
    for (int q = 0; q < 20; ++q) {
      const int64_t t = 1 + int64_t(rng() % uint32_t(tick));
      const ConvexShape shape = q % 2 ? MakeSphere(1.0f) : MakeBox({1, 0.5f, 2});
      const PosedShape probe{&shape, {RandomRotation(rng), {pos(rng), pos(rng), pos(rng)}}};
      std::vector<BodyPartRef> want;
      for (const auto& [id, pose] : recorded[t]) {
        for (const BodyPartDesc& p : parts) {
          const PosedShape part{&p.shape, pose * p.local};
          if (GjkIntersect(probe, part)) want.push_back({id, p.part_id});
        }
      }
      std::sort(want.begin(), want.end(), [](const BodyPartRef& a, const BodyPartRef& c) {
        return a.body_id != c.body_id ? a.body_id < c.body_id : a.part_id < c.part_id;
      });
      absl::StatusOr<std::vector<BodyPartRef>> got = world.Overlap(probe, t, {});
      ASSERT_TRUE(got.ok());
      ASSERT_EQ(*got, want) << "tick " << t;
      ++compared;
      nonempty += !want.empty();
    }
  }
  EXPECT_EQ(compared, 800);
  EXPECT_GT(nonempty, 100);
}

}  // namespace
}  // namespace voxcol
