// EPA (through Penetration) against closed forms and an independent 15-axis SAT oracle.
#include "core/narrowphase/penetration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/core/narrowphase/random_cases.h"
#include "tests/core/narrowphase/sat_box_oracle.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::kCases;

// Signed distance from a world point to an oriented box: outside the clamped distance, inside
// minus the distance to the nearest face.
double SignedPointBoxDistance(const Vec3& p, const RigidTransform& pose, const Vec3& half) {
  Vec3 local = pose.ApplyInverse(p);
  double outside_sq = 0, inside = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    double q = std::fabs(double(local[i])) - half[i];
    if (q > 0) outside_sq += q * q;
    inside = std::max(inside, q);
  }
  return outside_sq > 0 ? std::sqrt(outside_sq) : inside;
}

TEST(PenetrationTest, SphereBoxDepthMatchesClosedForm) {
  CaseRng rng(201);
  int deep = 0, shallow = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    Vec3 half{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    ConvexShape box = MakeBox(half), sphere = MakeSphere(rng.Uniform(0.1f, 1) * s);
    PosedShape pb{&box, {rng.Rotation(), rng.InBox(s)}};
    // Centres near the box surface or inside it.
    Vec3 local = Mul(rng.InBox(1.4f), half);
    PosedShape ps{&sphere, {rng.Rotation(), pb.pose.Apply(local)}};
    double sd = SignedPointBoxDistance(ps.pose.translation, pb.pose, half);
    double expected = sphere.convex_radius - sd;
    if (expected < 1e-3 * s) continue;
    PenetrationResult r = ComputePenetration(pb, ps);
    ASSERT_TRUE(r.overlapping) << i;
    ASSERT_FALSE(r.epa_failed) << i;
    ASSERT_NEAR(r.depth, expected, 1e-3 * s) << i << " sd=" << sd;
    (sd < 0 ? deep : shallow) += 1;
    // Moving the sphere (B) by depth * normal must leave it just touching the box.
    Vec3 moved = ps.pose.translation + r.normal * r.depth;
    ASSERT_NEAR(SignedPointBoxDistance(moved, pb.pose, half) - sphere.convex_radius, 0, 1e-3 * s)
        << i;
  }
  EXPECT_GT(deep, kCases / 10);
  EXPECT_GT(shallow, kCases / 10);
}

TEST(PenetrationTest, BoxBoxDepthMatchesSatOracle) {
  CaseRng rng(202);
  int tested = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    Vec3 ha{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    Vec3 hb{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    ConvexShape a = MakeBox(ha), b = MakeBox(hb);
    PosedShape pa{&a, {rng.Rotation(), rng.InBox(s)}}, pb{&b, {rng.Rotation(), rng.InBox(s)}};
    testing::SatResult sat = testing::SatBoxBox(pa.pose, ha, pb.pose, hb);
    if (sat.depth < 1e-3 * s) continue;
    ++tested;
    PenetrationResult r = ComputePenetration(pa, pb);
    ASSERT_TRUE(r.overlapping) << i;
    ASSERT_FALSE(r.epa_failed) << i;
    ASSERT_NEAR(r.depth, sat.depth, 1e-3 * s) << i;
    // Translating B by the reported MTD leaves the boxes touching by the oracle.
    PosedShape moved = pb;
    moved.pose.translation += r.normal * r.depth;
    ASSERT_NEAR(testing::SatBoxBox(pa.pose, ha, moved.pose, hb).depth, 0, 1e-3 * s) << i;
  }
  EXPECT_GT(tested, kCases / 2);
}

TEST(PenetrationTest, RoundedBoxesUseCoresWhenShallow) {
  // Two unit boxes rounded by 0.2, faces 0.3 apart: cores 0.7 apart, rounded parts overlap 0.1.
  ConvexShape box = MakeBox({1, 1, 1}, 0.2f);
  PenetrationResult r = ComputePenetration({&box, {{}, {0, 0, 0}}}, {&box, {{}, {1.9f, 0.3f, 0}}});
  EXPECT_TRUE(r.overlapping);
  EXPECT_FALSE(r.used_epa);
  EXPECT_NEAR(r.depth, 0.1f, 1e-5f);
  EXPECT_NEAR(r.normal.x, 1, 1e-5f);
}

TEST(PenetrationTest, DeepSphereAtBoxCentre) {
  ConvexShape box = MakeBox({1, 2, 3}), sphere = MakeSphere(0.5f);
  PenetrationResult r = ComputePenetration({&box, {}}, {&sphere, {}});
  ASSERT_TRUE(r.overlapping);
  EXPECT_NEAR(r.depth, 1.5f, 1e-4f);  // out through the nearest (x) face
  EXPECT_NEAR(std::fabs(r.normal.x), 1, 1e-4f);
}

TEST(PenetrationTest, IdenticalBoxesSamePose) {
  ConvexShape box = MakeBox({1, 0.25f, 3});
  RigidTransform pose{Quat::FromAxisAngle({1, 2, 3}, 0.9f), {10, 0, -4}};
  PenetrationResult r = ComputePenetration({&box, pose}, {&box, pose});
  ASSERT_TRUE(r.overlapping);
  EXPECT_NEAR(r.depth, 0.5f, 1e-4f);  // twice the smallest half extent
}

TEST(PenetrationTest, ThinBoxesCrossing) {
  CaseRng rng(203);
  for (int i = 0; i < 1000; ++i) {
    Vec3 ha{1, 1e-3f, 1}, hb{rng.Uniform(0.2f, 1), 1e-3f, rng.Uniform(0.2f, 1)};
    ConvexShape a = MakeBox(ha), b = MakeBox(hb);
    PosedShape pa{&a, {rng.Rotation(), {}}}, pb{&b, {rng.Rotation(), rng.InBox(0.3f)}};
    testing::SatResult sat = testing::SatBoxBox(pa.pose, ha, pb.pose, hb);
    if (sat.depth < 1e-4) continue;
    PenetrationResult r = ComputePenetration(pa, pb);
    ASSERT_TRUE(r.overlapping) << i;
    ASSERT_NEAR(r.depth, sat.depth, 1e-4) << i;
  }
}

TEST(PenetrationTest, SeparatedShapesReportSeparation) {
  ConvexShape a = MakeSphere(1), b = MakeBox({1, 1, 1});
  PenetrationResult r = ComputePenetration({&a, {{}, {0, 5, 0}}}, {&b, {}});
  EXPECT_FALSE(r.overlapping);
  EXPECT_NEAR(r.separation, 3, 1e-5f);
  EXPECT_NEAR(r.normal.y, -1, 1e-5f);
}

// Any convex pair: sphere, capsule, sharp or rounded box, random hull. No closed form, so check
// the MTD's defining property with GJK distance: moving B by (depth + e) * normal leaves a gap of
// e, moving it by (depth - e) * normal leaves the shapes overlapping.
ConvexShape RandomShape(CaseRng& rng, float s, Vec3* hull_points) {
  switch (int(rng.Uniform(0, 5))) {
    case 0:
      return MakeSphere(rng.Uniform(0.1f, 1) * s);
    case 1:
      return MakeCapsule(rng.Uniform(0, 1) * s, rng.Uniform(0.1f, 0.5f) * s);
    case 2:
      return MakeBox(
          {rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s});
    case 3: {
      Vec3 h{rng.Uniform(0.2f, 1) * s, rng.Uniform(0.2f, 1) * s, rng.Uniform(0.2f, 1) * s};
      return MakeBox(h, 0.1f * std::min({h.x, h.y, h.z}));
    }
    default: {
      int n = 4 + int(rng.Uniform(0, 60));
      for (int i = 0; i < n; ++i) hull_points[i] = rng.InBox(s);
      return MakeConvexHull(hull_points, n);
    }
  }
}

TEST(PenetrationTest, MtdOfMixedShapesJustSeparates) {
  CaseRng rng(204);
  int tested = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    Vec3 pts_a[kMaxHullPoints], pts_b[kMaxHullPoints];
    ConvexShape a = RandomShape(rng, s, pts_a), b = RandomShape(rng, s, pts_b);
    PosedShape pa{&a, {rng.Rotation(), rng.InBox(s)}}, pb{&b, {rng.Rotation(), rng.InBox(s)}};
    PenetrationResult r = ComputePenetration(pa, pb);
    if (!r.overlapping || r.depth < 2e-3f * s) continue;
    ++tested;
    ASSERT_FALSE(r.epa_failed) << i;
    ASSERT_NEAR(Length(r.normal), 1, 1e-5) << i;
    const float e = 1e-3f * s;
    PosedShape out = pb, in = pb;
    out.pose.translation += r.normal * (r.depth + e);
    in.pose.translation += r.normal * (r.depth - e);
    GjkResult gap = GjkDistance(pa, out);
    ASSERT_FALSE(gap.overlapping) << i;
    ASSERT_NEAR(gap.distance, e, 1e-4 * s) << i;
    ASSERT_TRUE(GjkIntersect(pa, in)) << i;
  }
  EXPECT_GT(tested, kCases / 4);
}

TEST(PenetrationTest, FaceToFaceTouchingBoxesHaveNoDepth) {
  ConvexShape box = MakeBox({1, 1, 1});
  Quat q = Quat::FromAxisAngle({1, 2, 3}, 0.4f);
  PenetrationResult r = ComputePenetration({&box, {q, {}}}, {&box, {q, q.Rotate({2, 0.3f, 0.1f})}});
  EXPECT_LT(r.depth, 1e-5f);
}

}  // namespace
}  // namespace voxcol
