// Terrain sweeps, contacts and overlaps against analytic worlds (planes, a ball, water levels)
// whose answers are known in closed form, and against brute force over every triangle of a cave
// world.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "core/mesh/marching_cubes.h"
#include "core/narrowphase/cast_vs_triangle.h"
#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/sweep.h"
#include "core/query/validate.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr float kPi = 3.14159265f;
using Sdf = std::function<float(const Vec3&)>;  // voxel units, negative inside

// Occupancy from the signed distance at the voxel centre: clamp(0.5 - d, 0, 1), as the smooth
// raycast tests do; the marching-cubes surface then follows the analytic one closely.
Voxel SdfVoxel(const Sdf& sdf, const Int3& v) {
  float d = sdf(Vec3(v.x + 0.5f, v.y + 0.5f, v.z + 0.5f));
  return Voxel{kMaterialRock, uint8_t(std::lround(std::clamp(0.5f - d, 0.0f, 1.0f) * 255.0f))};
}

struct Scene {
  std::unique_ptr<World> world;
  std::unique_ptr<BroadphaseIndex> index;
  std::unique_ptr<ChunkCollisionCache> cache;
};

Scene MakeScene(std::function<Voxel(const Int3&)> f, Int3 size = {64, 64, 64}, float h = 1.0f) {
  Scene s;
  s.world = testing::MakeFunctionWorld(std::move(f), size, h);
  s.cache = std::make_unique<ChunkCollisionCache>(*s.world, size_t(64) << 20);
  s.index = std::make_unique<BroadphaseIndex>(*s.world);
  return s;
}

Scene SdfScene(const Sdf& sdf, Int3 size = {64, 64, 64}, float h = 1.0f) {
  return MakeScene([sdf](const Int3& v) { return SdfVoxel(sdf, v); }, size, h);
}

Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> n;
  Vec3 v(n(rng), n(rng), n(rng));
  return LengthSq(v) > 1e-8f ? Normalize(v) : Vec3(0, 1, 0);
}

Quat RandomRotation(std::mt19937& rng) {
  std::uniform_real_distribution<float> angle(0, 2 * kPi);
  return Quat::FromAxisAngle(RandomUnit(rng), angle(rng));
}

float AngleDeg(const Vec3& a, const Vec3& b) {
  return std::acos(std::clamp(Dot(Normalize(a), Normalize(b)), -1.0f, 1.0f)) * 180.0f / kPi;
}

// Every contact point of every chunk manifold.
std::vector<Contact> AllPoints(const ContactsResult& c) {
  std::vector<Contact> out;
  for (const ChunkContacts& m : c.chunks) out.insert(out.end(), m.points, m.points + m.count);
  return out;
}

SweepResult Sweep(Scene& s, const ConvexShape& shape, const RigidTransform& pose, const Vec3& dir,
                  float distance, SweepSettings settings = {}) {
  PosedShape posed{&shape, pose};
  EXPECT_TRUE(ValidatePosedShape(*s.world, &posed, QueryLimits{}, "shape.").ok());
  SweepResult r;
  Sweep(*s.index, *s.cache, {posed, dir, distance}, settings, &r);
  EXPECT_TRUE(r.load_status.ok());
  return r;
}

ContactsResult Contacts(Scene& s, const ConvexShape& shape, const RigidTransform& pose,
                        ContactsSettings settings = {}) {
  PosedShape posed{&shape, pose};
  EXPECT_TRUE(ValidatePosedShape(*s.world, &posed, QueryLimits{}, "shape.").ok());
  ContactsResult r;
  Contacts(*s.index, *s.cache, posed, settings, &r);
  EXPECT_TRUE(r.load_status.ok());
  return r;
}

// Spheres of radius 0.3..3 voxels swept at a tilted plane from 1..12 voxels above it, within 60
// degrees of its normal: the time of impact is (height - r) / cos.
TEST(ShapeQueryTest, SphereSweepsStopAtTheAnalyticPlane) {
  const Vec3 n = Normalize(Vec3(0.3f, 1.0f, -0.45f));
  const float offset = 1.3f;
  Scene s = SdfScene([n, offset](const Vec3& p) { return Dot(p, n) - offset; }, {96, 96, 96});
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-20, 20), radius(0.3f, 3.0f), clearance(1.0f, 12.0f),
      cosine(0.5f, 1.0f);
  float max_error = 0;
  int misses = 0;
  for (int i = 0; i < 2000; ++i) {
    const float r = radius(rng);
    Vec3 q(u(rng), 0, u(rng));
    q = q - n * (Dot(q, n) - offset);  // on the plane
    const float height = r + clearance(rng);
    const Vec3 centre = q + n * height;
    // A direction into the plane with Dot(-n, dir) = c.
    const float c = cosine(rng);
    Vec3 lateral = RandomUnit(rng);
    lateral = Normalize(lateral - n * Dot(lateral, n) + Vec3(1e-3f, 0, 0));
    const Vec3 dir = Normalize(-n * c + lateral * std::sqrt(1 - c * c));
    const float analytic = (height - r) / Dot(-n, dir);
    SweepResult hit = Sweep(s, MakeSphere(r), {{}, centre}, dir, analytic + 5.0f);
    if (!hit.hit || hit.initial_overlap) {
      ++misses;
      continue;
    }
    max_error = std::max(max_error, std::fabs(hit.first.distance - analytic));
    EXPECT_LE(AngleDeg(hit.first.normal, n), 10.0f);
  }
  // Bounds within 3x of the measured worst (one seed), asserted: each test prints both.
  const float bound = 0.012f;  // measured 0.0042
  std::printf(
      "sphere sweeps vs plane: 2000 sweeps, %d misses, max TOI error %.4f voxel (bound %.4f)\n",
      misses, max_error, bound);
  EXPECT_EQ(misses, 0);
  EXPECT_LE(max_error, bound);
}

// Capsules, boxes (sharp and rounded) and a hull in random orientations swept at the tilted
// plane: the time of impact is when the shape's lowest point along the normal reaches it (the GJK
// raycast path; spheres above take the closed form).
TEST(ShapeQueryTest, ConvexSweepsStopAtTheAnalyticPlane) {
  const Vec3 n = Normalize(Vec3(-0.2f, 1.0f, 0.35f));
  const float offset = -0.6f;
  Scene s = SdfScene([n, offset](const Vec3& p) { return Dot(p, n) - offset; }, {96, 96, 96});
  const Vec3 hull_points[] = {
      {0.5f, 0, 0}, {-0.4f, 0.3f, 0.1f}, {0, -0.6f, 0.2f}, {0.1f, 0.2f, -0.7f}, {0.3f, 0.4f, 0.5f}};
  const ConvexShape shapes[] = {MakeCapsule(0.9f, 0.4f), MakeBox({0.7f, 0.4f, 0.5f}),
                                MakeBox({0.7f, 0.4f, 0.5f}, 0.15f),
                                MakeConvexHull(hull_points, 5, 0.05f)};
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-20, 20), clearance(0.5f, 10.0f), cosine(0.5f, 1.0f);
  float max_error = 0;
  int misses = 0;
  for (int i = 0; i < 1200; ++i) {
    const ConvexShape& shape = shapes[i % 4];
    const Quat q = RandomRotation(rng);
    Vec3 p(u(rng), 0, u(rng));
    p = p - n * (Dot(p, n) - offset);
    const PosedShape probe{&shape, {q, {}}};
    const float below = -Dot(n, probe.Support(-n));  // lowest point's depth under the centre
    const float gap = clearance(rng);
    const Vec3 centre = p + n * (below + gap);
    const float c = cosine(rng);
    Vec3 lateral = RandomUnit(rng);
    lateral = Normalize(lateral - n * Dot(lateral, n) + Vec3(0, 0, 1e-3f));
    const Vec3 dir = Normalize(-n * c + lateral * std::sqrt(1 - c * c));
    const float analytic = gap / Dot(-n, dir);
    SweepResult hit = Sweep(s, shape, {q, centre}, dir, analytic + 4.0f);
    if (!hit.hit || hit.initial_overlap) {
      ++misses;
      continue;
    }
    max_error = std::max(max_error, std::fabs(hit.first.distance - analytic));
    EXPECT_LE(AngleDeg(hit.first.normal, n), 5.0f) << i;
  }
  const float bound = 0.0095f;  // measured 0.0033
  std::printf(
      "convex sweeps vs plane: 1200 sweeps, %d misses, max TOI error %.4f voxel (bound %.4f)\n",
      misses, max_error, bound);
  EXPECT_EQ(misses, 0);
  EXPECT_LE(max_error, bound);
}

// A real edge of the solid keeps its own normal: a sphere against the edge of a rock block, from
// the diagonal, is pushed out diagonally, not along either face.
TEST(ShapeQueryTest, RealEdgesKeepTheirNormals) {
  Scene s = MakeScene([](const Int3& v) {
    return (v.x < 0 && v.y < 0) ? Voxel{kMaterialRock, 255} : Voxel{};
  });
  const Vec3 diagonal = Normalize(Vec3(1, 1, 0));
  for (float z : {-3.3f, 0.2f, 4.7f}) {
    // Marching cubes bevels the edge: the plane x + y = -0.5 voxel; the sphere sinks 0.2 into it.
    const Vec3 centre = diagonal * 0.25f + Vec3(0, 0, z);
    ContactsResult c = Contacts(s, MakeSphere(0.8f), {{}, centre});
    ASSERT_GT(c.total_points(), 0);
    Contact deepest;
    deepest.depth = -1;
    for (const Contact& p : AllPoints(c)) {
      if (p.depth > deepest.depth) deepest = p;
    }
    EXPECT_NEAR(deepest.depth, 0.8f - 0.25f - 0.5f / std::sqrt(2.0f), 0.01f);
    EXPECT_LE(AngleDeg(deepest.normal, diagonal), 2.0f);
  }
}

// Spheres swept at a ball of radius 10 voxels, aimed inside its inner 60%: the time of impact is
// the ray's entry into the ball grown by the sphere's radius.
TEST(ShapeQueryTest, SphereSweepsStopAtTheAnalyticBall) {
  const Vec3 centre(0.37f, -1.21f, 2.53f);
  const float R = 10.0f;
  for (float h : {1.0f, 0.5f}) {
    Scene s =
        SdfScene([centre, R](const Vec3& p) { return Length(p - centre) - R; }, {64, 64, 64}, h);
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> radius(0.3f, 2.5f), away(14.0f, 22.0f), inner(0, 6.0f);
    float max_error = 0;
    int misses = 0;
    for (int i = 0; i < 2000; ++i) {
      const float r = radius(rng);
      const Vec3 from = centre + RandomUnit(rng) * away(rng);
      const Vec3 to = centre + RandomUnit(rng) * inner(rng);
      const Vec3 dir = Normalize(to - from);
      // |from + t dir - centre| = R + r, smaller root.
      const Vec3 m = from - centre;
      const float b = Dot(m, dir), k = LengthSq(m) - (R + r) * (R + r);
      const float analytic = -b - std::sqrt(b * b - k);
      SweepResult hit = Sweep(s, MakeSphere(r * h), {{}, from * h}, dir, (analytic + 5.0f) * h);
      if (!hit.hit || hit.initial_overlap) {
        ++misses;
        continue;
      }
      max_error = std::max(max_error, std::fabs(hit.first.distance / h - analytic));
    }
    const float bound = 0.1f;  // measured 0.042 at both voxel sizes
    std::printf(
        "sphere sweeps vs ball r=10 voxels, h=%g: %d misses, max TOI error %.4f voxel (bound "
        "%.2f)\n",
        h, misses, max_error, bound);
    EXPECT_EQ(misses, 0);
    EXPECT_LE(max_error, bound);
  }
}

// Capsules in random orientations resting on flat ground, their lowest point sunk by a known
// depth: every contact points up within 1.5 degrees and the deepest matches the sunk depth.
TEST(ShapeQueryTest, CapsuleRestingOnAPlaneGetsUpNormalsAndItsDepth) {
  const float ground = 0.37f;
  Scene s = SdfScene([ground](const Vec3& p) { return p.y - ground; });
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-20, 20), sink(0.01f, 0.3f), radius(0.25f, 1.0f),
      half(0.0f, 1.5f);
  float max_angle = 0, max_depth_error = 0;
  int empty = 0;
  for (int i = 0; i < 1000; ++i) {
    const ConvexShape capsule = MakeCapsule(half(rng), radius(rng));
    const Quat q =
        i % 3 == 0 ? Quat{}
                   : (i % 3 == 1 ? Quat::FromAxisAngle({0, 0, 1}, kPi / 2) : RandomRotation(rng));
    const float depth = sink(rng);
    const Vec3 axis = q.Rotate({0, capsule.half_height, 0});
    const float lowest = -std::fabs(axis.y) - capsule.convex_radius;  // relative to the centre
    const Vec3 centre(u(rng), ground - depth - lowest, u(rng));
    ContactsResult c = Contacts(s, capsule, {q, centre});
    if (c.total_points() == 0) {
      ++empty;
      continue;
    }
    float deepest = -1;
    for (const ChunkContacts& m : c.chunks) EXPECT_LE(m.count, kMaxManifoldPoints);
    for (const Contact& p : AllPoints(c)) {
      max_angle = std::max(max_angle, AngleDeg(p.normal, {0, 1, 0}));
      deepest = std::max(deepest, p.depth);
    }
    max_depth_error = std::max(max_depth_error, std::fabs(deepest - depth));
  }
  const float angle_bound = 1.5f, depth_bound = 0.0035f;  // measured 0.53 deg, 0.0013 voxel
  std::printf(
      "capsules on a plane: 1000 poses, %d without contacts, max normal error %.2f deg (bound "
      "%.2f), max depth error %.4f voxel (bound %.4f)\n",
      empty, max_angle, angle_bound, max_depth_error, depth_bound);
  EXPECT_LE(empty, 0);
  EXPECT_LE(max_angle, angle_bound);
  EXPECT_LE(max_depth_error, depth_bound);
}

// A sphere whose centre lies below flat ground (inside the solid): every contact pushes it out
// through the top, by the plane depth radius + how far the centre is below, not by the distance
// to the closest point.
TEST(ShapeQueryTest, SphereWithItsCentreBelowTheGroundPushesOutThroughTheTop) {
  const float ground = 0.37f;
  Scene s = SdfScene([ground](const Vec3& p) { return p.y - ground; });
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-20, 20), radius(0.5f, 2.0f), below(0.05f, 0.9f);
  float max_angle = 0, max_depth_error = 0;
  for (int i = 0; i < 500; ++i) {
    const ConvexShape sphere = MakeSphere(radius(rng));
    const float under = below(rng) * sphere.convex_radius;
    const Vec3 centre(u(rng), ground - under, u(rng));
    ContactsResult c = Contacts(s, sphere, {{}, centre});
    ASSERT_GT(c.total_points(), 0) << i;
    float deepest = -1;
    for (const Contact& p : AllPoints(c)) {
      max_angle = std::max(max_angle, AngleDeg(p.normal, {0, 1, 0}));
      deepest = std::max(deepest, p.depth);
    }
    max_depth_error =
        std::max(max_depth_error, std::fabs(deepest - (sphere.convex_radius + under)));
  }
  const float angle_bound = 1.5f, depth_bound = 0.0035f;
  std::printf(
      "spheres below a plane: 500 poses, max normal error %.2f deg (bound %.2f), max depth "
      "error %.4f voxel (bound %.4f)\n",
      max_angle, angle_bound, max_depth_error, depth_bound);
  EXPECT_LE(max_angle, angle_bound);
  EXPECT_LE(max_depth_error, depth_bound);
}

// A box dragged over flat ground in small steps, across triangle edges and chunk seams (every 8
// voxels): no contact normal ever leans more than 0.6 degrees off up.
TEST(ShapeQueryTest, BoxDraggedAcrossChunkSeamsKeepsUpNormals) {
  const float ground = 0.37f;
  Scene s = SdfScene([ground](const Vec3& p) { return p.y - ground; });
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> yaw(0, 2 * kPi), sink(0.01f, 0.2f);
  float max_angle = 0;
  int steps = 0, empty = 0;
  for (int run = 0; run < 12; ++run) {
    const ConvexShape box = MakeBox({0.7f, 0.5f, 0.45f}, run % 2 ? 0.1f : 0.0f);
    const Quat q = Quat::FromAxisAngle({0, 1, 0}, yaw(rng));
    const float depth = sink(rng);
    const float lowest = -0.5f;
    const Vec3 dir = Normalize(Vec3(1.0f, 0, 0.07f * (run - 6)));
    const Vec3 start(-20.3f, ground - depth - lowest, -6.1f + run);
    for (float t = 0; t < 40.0f; t += 0.13f, ++steps) {
      ContactsResult c = Contacts(s, box, {q, start + dir * t});
      if (c.total_points() == 0) ++empty;
      for (const Contact& p : AllPoints(c)) {
        max_angle = std::max(max_angle, AngleDeg(p.normal, {0, 1, 0}));
      }
    }
  }
  const float bound = 0.6f;  // measured 0.20 deg (90 without the internal-edge step)
  std::printf(
      "box dragged over seams: %d poses, %d without contacts, max normal error %.2f deg (bound "
      "%.2f)\n",
      steps, empty, max_angle, bound);
  EXPECT_EQ(empty, 0);
  EXPECT_LE(max_angle, bound);
}

// A box lying flat on the ground touches it with its whole bottom face: the manifolds hold a
// point at each bottom corner (face clipping, not one closest point per triangle), each at the
// sunk depth; a capsule lying flat gets both ends.
TEST(ShapeQueryTest, RestingBoxReportsItsCornersAndLyingCapsuleBothEnds) {
  const float ground = 0.37f;
  Scene s = SdfScene([ground](const Vec3& p) { return p.y - ground; });
  std::mt19937 rng(37);
  std::uniform_real_distribution<float> u(-20, 20), yaw(0, 2 * kPi), sink(0.02f, 0.2f);
  float max_corner_miss = 0, max_depth_error = 0;
  for (int i = 0; i < 300; ++i) {
    const bool box = i % 2 == 0;
    const float depth = sink(rng);
    const Quat q =
        box ? Quat::FromAxisAngle({0, 1, 0}, yaw(rng))
            : Quat::FromAxisAngle({0, 1, 0}, yaw(rng)) * Quat::FromAxisAngle({0, 0, 1}, kPi / 2);
    const ConvexShape shape = box ? MakeBox({0.7f, 0.5f, 0.45f}) : MakeCapsule(0.8f, 0.3f);
    const float below = box ? 0.5f : 0.3f;
    const Vec3 centre(u(rng), ground + below - depth, u(rng));
    ContactsResult c = Contacts(s, shape, {q, centre});
    std::vector<Vec3> expected;  // the feature's lowest points, on the ground
    if (box) {
      for (float sx : {-0.7f, 0.7f})
        for (float sz : {-0.45f, 0.45f})
          expected.push_back(centre + q.Rotate({sx, -0.5f, sz}) + Vec3(0, depth, 0));
    } else {
      for (float sy : {-0.8f, 0.8f})
        expected.push_back(centre + q.Rotate({0, sy, 0}) + Vec3(0, depth - 0.3f, 0));
    }
    const std::vector<Contact> points = AllPoints(c);
    for (const Vec3& e : expected) {
      float nearest = 1e9f;
      for (const Contact& p : points) nearest = std::min(nearest, Length(p.position - e));
      max_corner_miss = std::max(max_corner_miss, nearest);
    }
    for (const Contact& p : points) {
      max_depth_error = std::max(max_depth_error, std::fabs(p.depth - depth));
    }
  }
  const float bound = 0.0035f;  // measured 0.0013 for both
  std::printf(
      "resting boxes and lying capsules: max distance from a corner/end to its contact %.4f, "
      "max depth error %.4f voxel (bound %.4f)\n",
      max_corner_miss, max_depth_error, bound);
  EXPECT_LE(max_corner_miss, bound);
  EXPECT_LE(max_depth_error, bound);
}

// Water up to a fractional level (the top water voxel partly filled), rock far below: boxes,
// spheres and upright capsules (characters) at random heights report the submerged fraction of
// the closed form within 0.012.
TEST(ShapeQueryTest, SubmergedFractionMatchesTheWaterLevel) {
  for (float level : {3.0f, 4.6f}) {
    Scene s = MakeScene([level](const Int3& v) {
      if (v.y < -24) return Voxel{kMaterialRock, 255};
      const float fill = std::clamp(level - float(v.y), 0.0f, 1.0f);
      if (fill <= 0) return Voxel{};
      return Voxel{kMaterialWater, uint8_t(std::lround(fill * 255.0f))};
    });
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> u(-10, 10), offset(-2.5f, 2.5f);
    float max_error = 0;
    for (int i = 0; i < 400; ++i) {
      const int kind = i % 3;  // 0 box, 1 sphere, 2 capsule
      const bool sphere = kind == 1;
      constexpr float kCapsuleRadius = 0.6f, kCapsuleCore = 0.9f;  // half of the core segment
      const ConvexShape shape = kind == 0 ? MakeBox({1.5f, 1.0f, 1.2f})
                                : sphere  ? MakeSphere(1.2f)
                                          : MakeCapsule(kCapsuleCore, kCapsuleRadius);
      const float half_height = kind == 0 ? 1.0f : sphere ? 1.2f : kCapsuleCore + kCapsuleRadius;
      const Vec3 centre(u(rng), level + offset(rng), u(rng));
      // Depth of the lowest point under the surface, clamped to the shape.
      const float wet = std::clamp(level - (centre.y - half_height), 0.0f, 2 * half_height);
      // Volume of a ball's cap of height w.
      const auto cap = [](float r, float w) { return kPi * w * w * (3 * r - w) / 3.0f; };
      float expected;
      if (sphere) {
        const float r = 1.2f;
        expected = cap(r, wet) / (4.0f / 3.0f * kPi * r * r * r);
      } else if (kind == 2) {
        // The end balls' part (a cap of the lower one, then the upper one's below the level) and
        // the cylinder's.
        const float r = kCapsuleRadius, cylinder = 2 * kCapsuleCore;
        const float ball_wet = wet <= r ? wet : r + std::max(0.0f, wet - r - cylinder);
        const float volume = cap(r, ball_wet) + kPi * r * r * std::clamp(wet - r, 0.0f, cylinder);
        expected = volume / (4.0f / 3.0f * kPi * r * r * r + kPi * r * r * cylinder);
      } else {
        expected = wet / (2 * half_height);
      }
      ContactsResult c = Contacts(s, shape, {{}, centre});
      EXPECT_EQ(c.total_points(), 0);
      const float got = c.water.in_water ? c.water.submerged_fraction : 0.0f;
      max_error = std::max(max_error, std::fabs(got - expected));
      if (c.water.in_water) {
        EXPECT_NEAR(c.water.surface_height, level, 0.01f);
        EXPECT_LE(c.water.center_of_buoyancy.y, std::min(level, centre.y + half_height) + 1e-3f);
        EXPECT_NEAR(c.water.center_of_buoyancy.x, centre.x, 0.05f);
      }
      // Exactly half under: the Done-means case.
      if (i == 0) {
        ContactsResult half = Contacts(s, MakeBox({1.5f, 1.0f, 1.2f}), {{}, {2.2f, level, -1.7f}});
        std::printf("half-submerged box at level %g: fraction %.4f\n", level,
                    half.water.submerged_fraction);
        EXPECT_NEAR(half.water.submerged_fraction, 0.5f, 0.012f);
      }
    }
    const float bound = 0.012f;  // measured 0.0042 at both levels
    std::printf("water level %g: 400 shapes, max submerged-fraction error %.4f (bound %.4f)\n",
                level, max_error, bound);
    EXPECT_LE(max_error, bound);
  }
}

TEST(ShapeQueryTest, RotatedBoxHalfUnderWaterIsHalfSubmerged) {
  const float level = 4.5f;
  Scene s = MakeScene([level](const Int3& v) {
    const float fill = std::clamp(level - float(v.y), 0.0f, 1.0f);
    return fill > 0 ? Voxel{kMaterialWater, uint8_t(std::lround(fill * 255.0f))} : Voxel{};
  });
  std::mt19937 rng(3);
  for (int i = 0; i < 50; ++i) {
    // Symmetric about its centre: a box centred on the surface is half under in any orientation.
    const Quat q = RandomRotation(rng);
    ContactsResult c = Contacts(s, MakeBox({1.1f, 0.6f, 0.9f}), {q, {0.3f * i - 7, level, 1.1f}});
    ASSERT_TRUE(c.water.in_water);
    EXPECT_NEAR(c.water.submerged_fraction, 0.5f, 0.05f) << i;
  }
}

TEST(ShapeQueryTest, SphereStartingInTheGroundReportsItsOverlap) {
  const float ground = 0.37f;
  Scene s = SdfScene([ground](const Vec3& p) { return p.y - ground; });
  // Sunk by 0.4: the minimum translation is 0.4 up.
  SweepResult r = Sweep(s, MakeSphere(1.0f), {{}, {2.1f, ground + 0.6f, 3.3f}}, {1, 0, 0}, 5);
  ASSERT_TRUE(r.hit);
  EXPECT_TRUE(r.initial_overlap);
  EXPECT_NEAR(r.penetration.depth, 0.4f, 0.05f);
  EXPECT_LE(AngleDeg(r.first.normal, {0, 1, 0}), 5.0f);
  // Buried 6 voxels deep, touching no surface: out through the top, 6 + radius.
  SweepResult buried = Sweep(s, MakeSphere(1.0f), {{}, {2.1f, ground - 6.0f, 3.3f}}, {0, 1, 0}, 3);
  ASSERT_TRUE(buried.hit);
  EXPECT_TRUE(buried.initial_overlap);
  EXPECT_NEAR(buried.penetration.depth, 7.0f, 0.1f);
  EXPECT_LE(AngleDeg(buried.first.normal, {0, 1, 0}), 1.0f);
  {
    const ConvexShape sphere = MakeSphere(1.0f);
    OverlapSettings with_depth;
    with_depth.include_penetration = true;
    OverlapResult o;
    Overlap(*s.index, *s.cache, {&sphere, {{}, {2.1f, ground + 0.6f, 3.3f}}}, with_depth, &o);
    EXPECT_TRUE(o.touches_solid);
    EXPECT_FALSE(o.touches_water);
    EXPECT_NEAR(o.penetration.depth, 0.4f, 0.05f);
    EXPECT_FALSE(o.chunks.empty());
    Overlap(*s.index, *s.cache, {&sphere, {{}, {2.1f, ground + 1.2f, 3.3f}}}, with_depth, &o);
    EXPECT_FALSE(o.touches_solid);
    EXPECT_TRUE(o.chunks.empty());
  }
}

TEST(ShapeQueryTest, ShapesRestingOnGroundSlideWithoutHitting) {
  const float ground = 0.37f;
  Scene s = SdfScene([ground](const Vec3& p) { return p.y - ground; });
  const ConvexShape sphere = MakeSphere(0.8f), box = MakeBox({0.5f, 0.5f, 0.5f});
  for (const ConvexShape* shape : {&sphere, &box}) {
    const float lowest = shape == &sphere ? 0.8f : 0.5f;
    // Touching within 1e-3 (plus the surface's occupancy rounding, 1/510 voxel): sliding along the
    // ground is free, pushing into it stops within that gap.
    const Vec3 centre(-10.2f, ground + lowest - 5e-4f, 0.4f);
    SweepResult slide = Sweep(s, *shape, {{}, centre}, {1, 0, 0.3f}, 20);
    EXPECT_FALSE(slide.hit) << slide.first.distance;
    SweepResult push = Sweep(s, *shape, {{}, centre}, {1, -0.5f, 0}, 20);
    ASSERT_TRUE(push.hit);
    EXPECT_FALSE(push.initial_overlap);
    EXPECT_LE(push.first.distance, 0.01f);
  }
}

// Brute force over every triangle of every mesh chunk: the closest sweep equals the smallest time
// of impact over all front faces moving into them; kAll lists them in order; kAny is one of them.
TEST(ShapeQueryTest, CaveSweepsEqualBruteForceOverAllTriangles) {
  Scene s;
  s.world = testing::MakeCaveWorld(7, {64, 48, 64});
  s.cache = std::make_unique<ChunkCollisionCache>(*s.world, size_t(64) << 20);
  s.index = std::make_unique<BroadphaseIndex>(*s.world);
  std::vector<ChunkMesh> meshes;
  const IntBox range = MeshedChunkRange(*s.world);
  for (int32_t y = range.min.y; y < range.max.y; ++y)
    for (int32_t z = range.min.z; z < range.max.z; ++z)
      for (int32_t x = range.min.x; x < range.max.x; ++x) {
        ChunkMesh m = MeshChunk(*s.world, {x, y, z});
        if (!m.empty()) meshes.push_back(std::move(m));
      }
  std::mt19937 rng(23);
  const Aabb b = s.world->world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 2, b.max.x - 2), uy(b.min.y + 2, b.max.y - 2),
      uz(b.min.z + 2, b.max.z - 2), radius(0.3f, 1.5f), length(2.0f, 24.0f);
  ContactsSettings no_water;
  no_water.margin = 0.05f;
  no_water.water = false;
  int compared = 0, hits = 0;
  for (int i = 0; i < 400 && compared < 150; ++i) {
    const float r = radius(rng);
    const Vec3 start(ux(rng), uy(rng), uz(rng));
    const ConvexShape sphere = MakeSphere(r);
    // Start in open space, clear of the surface.
    ContactsResult c = Contacts(s, sphere, {{}, start}, no_water);
    if (c.total_points() > 0 || c.buried) continue;
    const Vec3 dir = RandomUnit(rng);
    const float dist = length(rng);
    const Vec3 translation = dir * dist;
    float oracle = 2;
    int oracle_hits = 0;
    for (const ChunkMesh& m : meshes)
      for (uint32_t t = 0; t < m.triangle_count(); ++t) {
        if (Dot(dir, m.Normal(t)) >= 0) continue;
        CastResult cr = CastSphereVsTriangle(start, r, translation, m.Corner(t, 0), m.Corner(t, 1),
                                             m.Corner(t, 2));
        if (!cr.hit || Dot(cr.normal, m.Normal(t)) < 0) continue;
        ++oracle_hits;
        oracle = std::min(oracle, cr.fraction);
      }
    ++compared;
    SweepResult closest = Sweep(s, sphere, {{}, start}, dir, dist);
    ASSERT_FALSE(closest.initial_overlap);
    ASSERT_EQ(closest.hit, oracle_hits > 0) << i;
    if (!closest.hit) continue;
    ++hits;
    EXPECT_NEAR(closest.first.distance, oracle * dist, 1e-4f * dist + 1e-5f) << i;
    SweepSettings all_settings;
    all_settings.collection = HitCollection::kAll;
    SweepResult all = Sweep(s, sphere, {{}, start}, dir, dist, all_settings);
    EXPECT_EQ(int(all.hits.size()), oracle_hits);
    EXPECT_TRUE(std::is_sorted(
        all.hits.begin(), all.hits.end(),
        [](const SweepHit& a, const SweepHit& b) { return a.distance < b.distance; }));
    EXPECT_FLOAT_EQ(all.first.distance, closest.first.distance);
    SweepSettings any_settings;
    any_settings.collection = HitCollection::kAny;
    SweepResult any = Sweep(s, sphere, {{}, start}, dir, dist, any_settings);
    ASSERT_TRUE(any.hit);
    EXPECT_GE(any.first.distance, closest.first.distance - 1e-5f);
  }
  std::printf("cave sweeps vs brute force: %d compared, %d hits\n", compared, hits);
  EXPECT_GE(compared, 100);
  EXPECT_GE(hits, 20);
}

TEST(ShapeQueryTest, ContactsOnTheCaveWorldAreBoundedAndUnit) {
  auto world = testing::MakeCaveWorld(3, {64, 48, 64});
  ChunkCollisionCache cache(*world, size_t(64) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(29);
  const Aabb b = world->world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 2, b.max.x - 2), uy(b.min.y + 2, b.max.y - 2),
      uz(b.min.z + 2, b.max.z - 2);
  const ConvexShape shapes[] = {MakeSphere(1.0f), MakeCapsule(0.8f, 0.4f),
                                MakeBox({0.6f, 0.4f, 0.5f}), MakeBox({0.6f, 0.4f, 0.5f}, 0.1f)};
  int with_contacts = 0;
  for (int i = 0; i < 400; ++i) {
    const ConvexShape& shape = shapes[i % 4];
    ContactsResult c;
    ContactsSettings settings;
    settings.margin = 0.1f;
    Contacts(index, cache, {&shape, {RandomRotation(rng), {ux(rng), uy(rng), uz(rng)}}}, settings,
             &c);
    ASSERT_TRUE(c.load_status.ok());
    with_contacts += c.total_points() > 0;
    for (size_t m = 0; m < c.chunks.size(); ++m) {
      if (m > 0) {
        const ChunkKey &p = c.chunks[m - 1].chunk, &k = c.chunks[m].chunk;
        EXPECT_TRUE(p.y != k.y ? p.y < k.y : (p.z != k.z ? p.z < k.z : p.x < k.x));
      }
      EXPECT_GE(c.chunks[m].count, 1);
      EXPECT_LE(c.chunks[m].count, kMaxManifoldPoints);
      for (int k = 0; k < c.chunks[m].count; ++k) {
        const Contact& t = c.chunks[m].points[k];
        EXPECT_NEAR(Length(t.normal), 1.0f, 1e-3f);
        EXPECT_GE(t.depth, -0.1f - 1e-4f);
        EXPECT_GE(t.material, 2);
      }
    }
  }
  EXPECT_GE(with_contacts, 20);
}

TEST(ShapeQueryTest, ValidationNamesTheField) {
  auto world = testing::MakeEmptyWorld();
  QueryLimits limits;
  auto check = [&](const ConvexShape& shape, const RigidTransform& pose, const char* field) {
    PosedShape posed{&shape, pose};
    absl::Status st = ValidatePosedShape(*world, &posed, limits, "shape.");
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_NE(st.message().find(field), std::string::npos) << st.message();
  };
  ConvexShape bad_sphere = MakeSphere(1);
  bad_sphere.convex_radius = std::nanf("");
  check(bad_sphere, {}, "shape.shape.sphere.radius");
  bad_sphere.convex_radius = 1000;
  check(bad_sphere, {}, "shape.shape.sphere.radius");
  ConvexShape capsule = MakeCapsule(1, 0.5f);
  capsule.half_height = -1;
  check(capsule, {}, "shape.shape.capsule.half_height");
  std::vector<Vec3> points(65, Vec3(0, 0, 0));
  ConvexShape hull;
  hull.type = ShapeType::kConvexHull;
  hull.points = points.data();
  hull.num_points = 65;
  check(hull, {}, "shape.shape.hull.points");
  check(MakeSphere(1), {{}, {1e6f, 0, 0}}, "shape.position");
  check(MakeSphere(1), {{}, {std::nanf(""), 0, 0}}, "shape.position");
  check(MakeSphere(1), {{2, 0, 0, 0}, {}}, "shape.rotation");
  // Without a prefix the field is named from the shape.
  PosedShape posed_capsule{&capsule, {}};
  EXPECT_NE(ValidatePosedShape(*world, &posed_capsule, limits, "")
                .message()
                .find("shape.capsule.half_height"),
            std::string::npos);
  // A rotation within 1e-3 of unit length is accepted and normalized in place.
  const ConvexShape ok = MakeCapsule(0.5f, 0.3f);
  PosedShape posed_ok{&ok, {{1.0005f, 0, 0, 0}, {}}};
  EXPECT_TRUE(ValidatePosedShape(*world, &posed_ok, limits, "").ok());
  EXPECT_FLOAT_EQ(posed_ok.pose.rotation.w, 1.0f);
}

}  // namespace
}  // namespace voxcol

namespace voxcol {
namespace {

// A passed deadline or a set cancel flag stops shape queries with that status (the service
// passes the call's deadline and the stream's cancellation; see QueryInterrupt), before any
// chunk's mesh is looked up: the work done after the deadline is counted, not timed, so the check
// holds on a loaded machine (without the gather's check the three queries look up 368 meshes).
TEST(ShapeQueryTest, InterruptStopsSweepsOverlapsAndContacts) {
  Scene s = SdfScene([](const Vec3& p) { return p.y - 0.37f; });
  const ConvexShape sphere = MakeSphere(20.0f);
  const PosedShape posed{&sphere, {{}, {0.5f, 0.5f, 0.5f}}};
  QueryInterrupt passed;
  passed.deadline = absl::Now() - absl::Seconds(1);
  std::atomic<bool> cancel{true};
  QueryInterrupt cancelled;
  cancelled.cancelled = &cancel;
  for (const auto& [interrupt, code] : {std::pair{&passed, absl::StatusCode::kDeadlineExceeded},
                                        std::pair{&cancelled, absl::StatusCode::kCancelled}}) {
    auto lookups = [&s] { return s.cache->stats().hits + s.cache->stats().builds; };
    const uint64_t before = lookups();
    ContactsSettings contacts_settings;
    contacts_settings.interrupt = interrupt;
    ContactsResult contacts;
    Contacts(*s.index, *s.cache, posed, contacts_settings, &contacts);
    EXPECT_EQ(contacts.load_status.code(), code);
    OverlapSettings overlap_settings;
    overlap_settings.interrupt = interrupt;
    OverlapResult overlap;
    Overlap(*s.index, *s.cache, posed, overlap_settings, &overlap);
    EXPECT_EQ(overlap.load_status.code(), code);
    SweepSettings sweep_settings;
    sweep_settings.interrupt = interrupt;
    SweepResult sweep;
    Sweep(*s.index, *s.cache, {posed, {1, 0, 0}, 10}, sweep_settings, &sweep);
    EXPECT_EQ(sweep.load_status.code(), code);
    EXPECT_EQ(lookups(), before) << "chunk meshes looked up after the query had to stop";
  }
  // Without an interrupt the same query answers.
  ContactsResult contacts;
  Contacts(*s.index, *s.cache, posed, ContactsSettings{}, &contacts);
  EXPECT_TRUE(contacts.load_status.ok());
  EXPECT_GT(contacts.total_points(), 0);
  EXPECT_GE(s.cache->stats().builds, 8u);
}

}  // namespace
}  // namespace voxcol
