// GJK distance against closed forms on seeded random cases over five orders of magnitude.
#include "core/narrowphase/gjk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/core/narrowphase/random_cases.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::D3;
using testing::kCases;
using testing::ToD;

// Distance from point p to segment [a, b] in double.
double PointSegmentDistance(const D3& p, const D3& a, const D3& b) {
  D3 ab = b - a;
  double len_sq = testing::DotD(ab, ab);
  double t = len_sq > 0 ? std::clamp(testing::DotD(p - a, ab) / len_sq, 0.0, 1.0) : 0.0;
  return testing::LenD(p - (a + ab * t));
}

// Segment-segment distance by ternary search: the distance from P(s) to segment Q is convex in s.
double SegmentSegmentDistance(const D3& p0, const D3& p1, const D3& q0, const D3& q1) {
  double lo = 0, hi = 1;
  auto f = [&](double s) { return PointSegmentDistance(p0 + (p1 - p0) * s, q0, q1); };
  for (int i = 0; i < 200; ++i) {
    double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) < f(m2))
      hi = m2;
    else
      lo = m1;
  }
  return std::min({f(0.5 * (lo + hi)), f(0), f(1)});
}

// Distance from a world point to an oriented box (Ericson 5.1.4: clamp in the box frame).
double PointBoxDistance(const Vec3& p, const RigidTransform& pose, const Vec3& half) {
  Vec3 local = pose.ApplyInverse(p);
  D3 d;
  for (int i = 0; i < 3; ++i) {
    double c = std::clamp<double>(local[i], -half[i], half[i]);
    (i == 0 ? d.x : i == 1 ? d.y : d.z) = local[i] - c;
  }
  return testing::LenD(d);
}

TEST(GjkDistanceTest, SphereSphereMatchesCentreDistanceMinusRadii) {
  CaseRng rng(101);
  int separated = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    ConvexShape a = MakeSphere(rng.Uniform(0.05f, 1) * s),
                b = MakeSphere(rng.Uniform(0.05f, 1) * s);
    PosedShape pa{&a, {rng.Rotation(), rng.InBox(3 * s)}},
        pb{&b, {rng.Rotation(), rng.InBox(3 * s)}};
    double expected = testing::LenD(ToD(pa.pose.translation) - ToD(pb.pose.translation)) -
                      a.convex_radius - b.convex_radius;
    GjkResult r = GjkDistance(pa, pb);
    if (expected > 1e-4 * s) {
      ++separated;
      ASSERT_FALSE(r.overlapping) << i;
      ASSERT_NEAR(r.distance, expected, 1e-4 * s) << i;
      ASSERT_NEAR(Length(r.point_b - r.point_a), expected, 1e-4 * s) << i;
    } else if (expected < -1e-4 * s) {
      ASSERT_TRUE(r.overlapping) << i;
    }
  }
  EXPECT_GT(separated, kCases / 2);
}

TEST(GjkDistanceTest, SphereBoxMatchesClampedClosestPoint) {
  CaseRng rng(102);
  int separated = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    Vec3 half{rng.Uniform(0.05f, 1) * s, rng.Uniform(0.05f, 1) * s, rng.Uniform(0.05f, 1) * s};
    ConvexShape box = MakeBox(half), sphere = MakeSphere(rng.Uniform(0.05f, 1) * s);
    PosedShape pb{&box, {rng.Rotation(), rng.InBox(s)}};
    PosedShape ps{&sphere, {rng.Rotation(), rng.InBox(4 * s)}};
    double expected = PointBoxDistance(ps.pose.translation, pb.pose, half) - sphere.convex_radius;
    bool box_first = rng.Chance(0.5f);
    GjkResult r = box_first ? GjkDistance(pb, ps) : GjkDistance(ps, pb);
    if (expected > 1e-4 * s) {
      ++separated;
      ASSERT_FALSE(r.overlapping) << i;
      ASSERT_NEAR(r.distance, expected, 1e-4 * s) << i;
      // The box's closest point lies on the box surface.
      Vec3 on_box = box_first ? r.point_a : r.point_b;
      ASSERT_NEAR(PointBoxDistance(on_box, pb.pose, half), 0, 1e-4 * s) << i;
    } else if (expected < -1e-4 * s) {
      ASSERT_TRUE(r.overlapping) << i;
    }
  }
  EXPECT_GT(separated, kCases / 2);
}

TEST(GjkDistanceTest, CapsuleCapsuleMatchesSegmentDistanceMinusRadii) {
  CaseRng rng(103);
  int separated = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    ConvexShape a = MakeCapsule(rng.Uniform(0, 1) * s, rng.Uniform(0.05f, 0.5f) * s);
    ConvexShape b = MakeCapsule(rng.Uniform(0, 1) * s, rng.Uniform(0.05f, 0.5f) * s);
    PosedShape pa{&a, {rng.Rotation(), rng.InBox(2 * s)}},
        pb{&b, {rng.Rotation(), rng.InBox(2 * s)}};
    auto end = [](const PosedShape& p, float sign) {
      return ToD(p.pose.Apply({0, sign * p.shape->half_height, 0}));
    };
    double expected = SegmentSegmentDistance(end(pa, -1), end(pa, 1), end(pb, -1), end(pb, 1)) -
                      a.convex_radius - b.convex_radius;
    GjkResult r = GjkDistance(pa, pb);
    if (expected > 1e-4 * s) {
      ++separated;
      ASSERT_FALSE(r.overlapping) << i;
      ASSERT_NEAR(r.distance, expected, 1e-4 * s) << i;
    } else if (expected < -1e-4 * s) {
      ASSERT_TRUE(r.overlapping) << i;
    }
  }
  EXPECT_GT(separated, kCases / 4);
}

TEST(GjkDistanceTest, HullOfBoxCornersMatchesBox) {
  // The same box as a support-function box and as an 8-point hull must give the same distance.
  CaseRng rng(104);
  for (int i = 0; i < 2000; ++i) {
    float s = rng.Scale();
    Vec3 half{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    Vec3 corners[8];
    for (int c = 0; c < 8; ++c) {
      corners[c] = {c & 1 ? half.x : -half.x, c & 2 ? half.y : -half.y, c & 4 ? half.z : -half.z};
    }
    ConvexShape box = MakeBox(half), hull = MakeConvexHull(corners, 8);
    ConvexShape other = MakeCapsule(rng.Uniform(0, 1) * s, rng.Uniform(0.05f, 0.5f) * s);
    RigidTransform pose{rng.Rotation(), rng.InBox(s)};
    PosedShape po{&other, {rng.Rotation(), rng.InBox(4 * s)}};
    GjkResult rb = GjkDistance({&box, pose}, po), rh = GjkDistance({&hull, pose}, po);
    ASSERT_EQ(rb.overlapping, rh.overlapping) << i;
    if (!rb.overlapping) {
      ASSERT_NEAR(rb.distance, rh.distance, 1e-4 * s) << i;
    }
  }
}

TEST(GjkDistanceTest, TouchingSpheresReportZeroDistance) {
  ConvexShape a = MakeSphere(1), b = MakeSphere(2);
  GjkResult r = GjkDistance({&a, {{}, {0, 0, 0}}}, {&b, {{}, {3, 0, 0}}});
  EXPECT_TRUE(r.overlapping || r.distance < 1e-5f);
}

TEST(GjkDistanceTest, IdenticalShapesOverlap) {
  ConvexShape box = MakeBox({1, 2, 3});
  RigidTransform pose{Quat::FromAxisAngle({1, 1, 0}, 0.7f), {5, -2, 1}};
  EXPECT_TRUE(GjkDistance({&box, pose}, {&box, pose}).overlapping);
  EXPECT_TRUE(GjkIntersect({&box, pose}, {&box, pose}));
}

TEST(GjkDistanceTest, ThinBoxesFaceToFace) {
  // Two 1e-3-thin plates 0.01 apart, rotated together.
  ConvexShape plate = MakeBox({1, 1e-3f, 1});
  Quat q = Quat::FromAxisAngle({0.3f, 1, 0.2f}, 1.1f);
  PosedShape a{&plate, {q, {0, 0, 0}}}, b{&plate, {q, q.Rotate({0.2f, 0.012f, -0.3f})}};
  GjkResult r = GjkDistance(a, b);
  ASSERT_FALSE(r.overlapping);
  EXPECT_NEAR(r.distance, 0.01f, 1e-6f);
}

TEST(GjkIntersectTest, AgreesWithClosedFormSphereBox) {
  CaseRng rng(105);
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    Vec3 half{rng.Uniform(0.05f, 1) * s, rng.Uniform(0.05f, 1) * s, rng.Uniform(0.05f, 1) * s};
    ConvexShape box = MakeBox(half), sphere = MakeSphere(rng.Uniform(0.05f, 1) * s);
    PosedShape pb{&box, {rng.Rotation(), rng.InBox(s)}};
    PosedShape ps{&sphere, {rng.Rotation(), rng.InBox(3 * s)}};
    double gap = PointBoxDistance(ps.pose.translation, pb.pose, half) - sphere.convex_radius;
    if (std::fabs(gap) < 1e-4 * s) continue;  // too close to call in float
    ASSERT_EQ(GjkIntersect(pb, ps), gap < 0) << i;
  }
}

}  // namespace
}  // namespace voxcol
