// EPA (through Penetration) against closed forms and an independent 15-axis SAT oracle.
#include "core/narrowphase/penetration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

// Least overlap of a segment p0-p1 and an oriented box over the segment-box CSO's face normals, in
// double. The CSO of a segment and a box is the zonotope spanned by the box's three edge directions
// and the segment: its faces are normal to the 3 box axes and to the 3 crosses of the segment with
// them, so when the segment crosses the box this is the exact penetration depth of the cores.
double SatSegmentBoxDepth(const Vec3& p0, const Vec3& p1, const RigidTransform& box,
                          const Vec3& half) {
  using testing::D3;
  D3 u[3];
  for (int i = 0; i < 3; ++i) {
    Vec3 e;
    e[i] = 1;
    u[i] = testing::ToD(box.rotation.Rotate(e));
  }
  const D3 hs = (testing::ToD(p1) - testing::ToD(p0)) * 0.5;
  const D3 t = (testing::ToD(p0) + hs) - testing::ToD(box.translation);
  double best = std::numeric_limits<double>::infinity();
  auto test_axis = [&](D3 l) {
    const double len = testing::LenD(l);
    if (len < 1e-9) return;  // the segment parallel to a box axis: the face axes cover it
    l = l * (1.0 / len);
    double r = std::fabs(testing::DotD(hs, l));
    for (int i = 0; i < 3; ++i) r += half[i] * std::fabs(testing::DotD(u[i], l));
    best = std::min(best, r - std::fabs(testing::DotD(t, l)));
  };
  for (int i = 0; i < 3; ++i) test_axis(u[i]);
  for (int i = 0; i < 3; ++i) test_axis(testing::CrossD(hs, u[i]));
  return best;
}

// A capsule whose segment crosses a box: the cores overlap, so Penetration runs EPA on the core CSO
// and adds the radius. The oracle's depth is the segment-box SAT depth plus the radius (the depth
// of a point in K + ball(r) is its depth in K plus r). Both argument orders, so the radius is added
// on either side. Moving the capsule by the reported MTD must leave it touching the box by GJK
// distance (exact on cores, independent of EPA).
TEST(PenetrationTest, CapsuleBoxCoresOverlapDepthMatchesSatOracle) {
  CaseRng rng(205);
  int tested = 0;
  for (int i = 0; i < kCases; ++i) {
    const float s = rng.Scale();
    const Vec3 half{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    ConvexShape box = MakeBox(half);
    ConvexShape capsule = MakeCapsule(rng.Uniform(0.05f, 1) * s, rng.Uniform(0.05f, 0.5f) * s);
    PosedShape pb{&box, {rng.Rotation(), rng.InBox(s)}};
    PosedShape pc{&capsule, {rng.Rotation(), pb.pose.Apply(Mul(rng.InBox(1.2f), half))}};
    Vec3 p0, p1;
    pc.CapsuleSegment(&p0, &p1);
    const double core = SatSegmentBoxDepth(p0, p1, pb.pose, half);
    if (core < 1e-3 * s) continue;  // cores apart or touching: the shallow path
    ++tested;
    const bool capsule_first = i % 2 == 1;
    PenetrationResult r = capsule_first ? ComputePenetration(pc, pb) : ComputePenetration(pb, pc);
    ASSERT_TRUE(r.overlapping) << i;
    ASSERT_TRUE(r.used_epa) << i;
    ASSERT_FALSE(r.epa_failed) << i;
    ASSERT_NEAR(r.depth, core + capsule.convex_radius, 1e-3 * s) << i;
    // Translating B by depth * normal separates the shapes.
    PosedShape moved = capsule_first ? pb : pc;
    moved.pose.translation += r.normal * r.depth;
    GjkResult gap = capsule_first ? GjkDistance(pc, moved) : GjkDistance(pb, moved);
    ASSERT_LT(gap.distance, 1e-3f * s) << i;
  }
  EXPECT_GT(tested, kCases / 4);
}

// Rounded boxes whose cores overlap: the depth is the SAT depth of the core boxes plus both
// rounding radii.
TEST(PenetrationTest, RoundedBoxesCoresOverlapDepthMatchesSatOracle) {
  CaseRng rng(206);
  int tested = 0;
  for (int i = 0; i < kCases; ++i) {
    const float s = rng.Scale();
    const Vec3 ha{rng.Uniform(0.2f, 1) * s, rng.Uniform(0.2f, 1) * s, rng.Uniform(0.2f, 1) * s};
    const Vec3 hb{rng.Uniform(0.2f, 1) * s, rng.Uniform(0.2f, 1) * s, rng.Uniform(0.2f, 1) * s};
    const float ra = rng.Uniform(0.01f, 0.9f) * std::min({ha.x, ha.y, ha.z});
    const float rb = rng.Uniform(0.01f, 0.9f) * std::min({hb.x, hb.y, hb.z});
    ConvexShape a = MakeBox(ha, ra), b = MakeBox(hb, rb);
    PosedShape pa{&a, {rng.Rotation(), rng.InBox(s)}}, pb{&b, {rng.Rotation(), rng.InBox(s)}};
    const double core = testing::SatBoxBox(pa.pose, a.half_extents, pb.pose, b.half_extents).depth;
    if (core < 1e-3 * s) continue;
    ++tested;
    PenetrationResult r = ComputePenetration(pa, pb);
    ASSERT_TRUE(r.overlapping) << i;
    ASSERT_FALSE(r.epa_failed) << i;
    ASSERT_NEAR(r.depth, core + ra + rb, 1e-3 * s) << i;
    ASSERT_NEAR(Length(r.normal), 1, 1e-5) << i;
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
