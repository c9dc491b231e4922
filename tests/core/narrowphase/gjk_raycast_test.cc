// GJK-raycast (convex casts) against analytic sphere casts.
#include "core/narrowphase/gjk_raycast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tests/core/narrowphase/random_cases.h"
#include "tests/core/narrowphase/sat_box_oracle.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::D3;
using testing::DotD;
using testing::kCases;
using testing::ToD;

// First t in [0, 1] with |c + t d - q| = r, or -1: the smaller root of
// |d|^2 t^2 + 2 (m.d) t + |m|^2 - r^2 = 0 with m = c - q.
double SphereCastToi(const D3& c, const D3& d, const D3& q, double r) {
  D3 m = c - q;
  double a = DotD(d, d), b = DotD(m, d), k = DotD(m, m) - r * r;
  if (k <= 0) return 0;
  double disc = b * b - a * k;
  if (b >= 0 || disc < 0) return -1;
  double t = (-b - std::sqrt(disc)) / a;
  return t <= 1 ? t : -1;
}

TEST(GjkRaycastTest, SphereVsSphereMatchesQuadraticRoot) {
  CaseRng rng(301);
  int hits = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    ConvexShape a = MakeSphere(rng.Uniform(0.05f, 1) * s),
                b = MakeSphere(rng.Uniform(0.05f, 1) * s);
    PosedShape pb{&b, {rng.Rotation(), rng.InBox(s)}};
    // Start outside, aim roughly at B.
    Vec3 start = pb.pose.translation + rng.UnitVector() * (rng.Uniform(2.2f, 6) * s);
    Vec3 aim = pb.pose.translation + rng.InBox(1.5f * s);
    Vec3 translation = (aim - start) * rng.Uniform(0.5f, 2);
    PosedShape pa{&a, {rng.Rotation(), start}};
    double r = a.convex_radius + b.convex_radius;
    double toi = SphereCastToi(ToD(start), ToD(translation), ToD(pb.pose.translation), r);
    CastResult hit = GjkRaycast(pa, translation, pb);
    double len = Length(translation);
    // Skip grazing cases within tolerance of the hit/miss boundary.
    if (toi < 0) {
      if (!hit.hit) continue;
      double tangent =
          SphereCastToi(ToD(start), ToD(translation), ToD(pb.pose.translation), r * (1 + 1e-4));
      ASSERT_GE(tangent, 0) << i << " false hit";
      continue;
    }
    ++hits;
    ASSERT_TRUE(hit.hit) << i;
    ASSERT_FALSE(hit.initially_overlapping) << i;
    ASSERT_NEAR(hit.fraction * len, toi * len, 1e-3 * s) << i;
    // Normal: from B's centre toward A's centre at impact; point on B's sphere.
    Vec3 centre = start + translation * float(toi);
    Vec3 expected_n = Normalize(centre - pb.pose.translation);
    ASSERT_GT(Dot(hit.normal, expected_n), 1 - 1e-3) << i;
    ASSERT_NEAR(Length(hit.point - pb.pose.translation), b.convex_radius, 1e-3 * s) << i;
  }
  EXPECT_GT(hits, kCases / 4);
}

TEST(GjkRaycastTest, SphereVsLargeBoxFaceMatchesPlaneToi) {
  CaseRng rng(302);
  int hits = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    // A plate much wider than the motion, so the sphere meets the top face: the plane case.
    Vec3 half{100 * s, rng.Uniform(0.1f, 1) * s, 100 * s};
    ConvexShape box = MakeBox(half), sphere = MakeSphere(rng.Uniform(0.05f, 1) * s);
    RigidTransform pose{rng.Rotation(), rng.InBox(s)};
    PosedShape pb{&box, pose};
    Vec3 up = pose.rotation.Rotate({0, 1, 0});
    float height = rng.Uniform(1.1f, 5) * s;  // centre height above the face
    Vec3 start = pose.Apply({rng.Uniform(-10, 10) * s, half.y + height, rng.Uniform(-10, 10) * s});
    // Direction into the face, at least 15 degrees from grazing.
    Vec3 dir;
    do dir = rng.UnitVector();
    while (Dot(dir, up) > -0.26f);
    Vec3 translation = dir * (rng.Uniform(0.2f, 2) * height / -Dot(dir, up));
    PosedShape ps{&sphere, {rng.Rotation(), start}};
    CastResult hit = GjkRaycast(ps, translation, pb);
    // Closed form: the centre's height above the face drops by -dir.up per unit length.
    double h = height - sphere.convex_radius;
    double speed = -DotD(ToD(translation), ToD(up));
    double toi = h / speed;
    if (toi > 1) {
      if (toi > 1 + 1e-3) {
        ASSERT_FALSE(hit.hit) << i;
      }
      continue;
    }
    ++hits;
    ASSERT_TRUE(hit.hit) << i;
    ASSERT_NEAR(hit.fraction * speed, toi * speed, 1e-3 * s) << i;  // along the face normal
    ASSERT_GT(Dot(hit.normal, up), 1 - 1e-3) << i;
    Vec3 expected_point = start + translation * float(toi) - up * sphere.convex_radius;
    ASSERT_NEAR(Length(hit.point - expected_point), 0, 2e-3 * s) << i;
  }
  EXPECT_GT(hits, kCases / 4);
}

TEST(GjkRaycastTest, StartingInsideReportsInitialOverlap) {
  ConvexShape a = MakeSphere(1), b = MakeBox({2, 2, 2});
  CastResult hit = GjkRaycast({&a, {{}, {0, 2.5f, 0}}}, {0, 5, 0}, {&b, {}});
  EXPECT_TRUE(hit.hit);
  EXPECT_TRUE(hit.initially_overlapping);
  EXPECT_EQ(hit.fraction, 0);
}

TEST(GjkRaycastTest, MovingAwayMisses) {
  ConvexShape a = MakeSphere(1), b = MakeBox({2, 2, 2});
  EXPECT_FALSE(GjkRaycast({&a, {{}, {0, 4, 0}}}, {0, 5, 0}, {&b, {}}).hit);
}

TEST(GjkRaycastTest, BoxCastOntoBoxFace) {
  // A unit cube dropping 10 onto a wide slab whose top is at y = 0: impact after 9 - 0 = ... the
  // cube's bottom starts at y = 4 so the fraction is 0.4.
  ConvexShape cube = MakeBox({1, 1, 1}), slab = MakeBox({50, 1, 50});
  CastResult hit =
      GjkRaycast({&cube, {{}, {0.3f, 5, -0.7f}}}, {0, -10, 0}, {&slab, {{}, {0, -1, 0}}});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.4f, 1e-4f);
  EXPECT_NEAR(hit.normal.y, 1, 1e-3f);
  EXPECT_NEAR(hit.point.y, 0, 1e-3f);
}

TEST(GjkRaycastTest, ZeroRadiusPointRayHitsTriangle) {
  // A ray is the cast of a point; cast a 0-half-height capsule of tiny radius vs a triangle.
  ConvexShape tri = MakeTriangle({-1, 0, -1}, {1, 0, -1}, {0, 0, 1});
  ConvexShape point = MakeCapsule(0, 1e-6f);
  CastResult hit = GjkRaycast({&point, {{}, {0.1f, 3, 0}}}, {0, -6, 0}, {&tri, {}});
  ASSERT_TRUE(hit.hit);
  EXPECT_NEAR(hit.fraction, 0.5f, 1e-4f);
  EXPECT_NEAR(std::fabs(hit.normal.y), 1, 1e-3f);
}

// Box-box casts (sharp shapes, no radius) vs bisection on the SAT overlap of the moved box: the
// first t with a non-negative SAT depth, when the SAT depth along the path has a single crossing.
TEST(GjkRaycastTest, BoxVsBoxMatchesSatBisection) {
  CaseRng rng(303);
  int hits = 0;
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    Vec3 ha{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    Vec3 hb{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    ConvexShape a = MakeBox(ha), b = MakeBox(hb);
    PosedShape pb{&b, {rng.Rotation(), rng.InBox(s)}};
    PosedShape pa{&a, {rng.Rotation(), pb.pose.translation + rng.UnitVector() * (4 * s)}};
    Vec3 translation = (pb.pose.translation + rng.InBox(s) - pa.pose.translation) * 1.5f;
    auto depth_at = [&](double t) {
      RigidTransform moved = pa.pose;
      moved.translation += translation * float(t);
      return testing::SatBoxBox(moved, ha, pb.pose, hb).depth;
    };
    if (depth_at(0) >= 0) continue;
    // Sample for the first crossing, then bisect.
    double lo = 0, hi = -1;
    for (int k = 1; k <= 256 && hi < 0; ++k) {
      if (depth_at(k / 256.0) >= 0)
        hi = k / 256.0;
      else
        lo = k / 256.0;
    }
    CastResult hit = GjkRaycast(pa, translation, pb);
    if (hi < 0) {
      if (hit.hit) {
        ASSERT_GT(depth_at(hit.fraction), -1e-3 * s) << i << " false hit";
      }
      continue;
    }
    for (int k = 0; k < 50; ++k) (depth_at(0.5 * (lo + hi)) >= 0 ? hi : lo) = 0.5 * (lo + hi);
    ++hits;
    ASSERT_TRUE(hit.hit) << i;
    float len = Length(translation);
    ASSERT_NEAR(hit.fraction * len, hi * len, 1e-3 * s) << i;
    // The reported normal separates: moving A back along it by a little leaves the boxes apart.
    RigidTransform at = pa.pose;
    at.translation += translation * hit.fraction + hit.normal * (1e-3f * s);
    ASSERT_LT(testing::SatBoxBox(at, ha, pb.pose, hb).depth, 0) << i;
  }
  std::printf("box-box casts vs SAT bisection: %d hits of %d\n", hits, kCases);
  EXPECT_GT(hits, 8000);  // measured 9,459
}

// Capsule-capsule casts vs bisection on the segment-segment distance (ternary search).
TEST(GjkRaycastTest, CapsuleVsCapsuleMatchesDistanceBisection) {
  CaseRng rng(304);
  int hits = 0;
  auto seg_dist = [](const D3& p0, const D3& p1, const D3& q0, const D3& q1) {
    auto point_seg = [](const D3& p, const D3& a, const D3& b) {
      D3 ab = b - a;
      double l = DotD(ab, ab);
      double t = l > 0 ? std::clamp(DotD(p - a, ab) / l, 0.0, 1.0) : 0.0;
      return testing::LenD(p - (a + ab * t));
    };
    double lo = 0, hi = 1;
    auto f = [&](double u) { return point_seg(p0 + (p1 - p0) * u, q0, q1); };
    for (int k = 0; k < 100; ++k) {
      double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      (f(m1) < f(m2) ? hi : lo) = f(m1) < f(m2) ? m2 : m1;
    }
    return std::min({f(0.5 * (lo + hi)), f(0), f(1)});
  };
  for (int i = 0; i < kCases; ++i) {
    float s = rng.Scale();
    ConvexShape a = MakeCapsule(rng.Uniform(0, 1) * s, rng.Uniform(0.05f, 0.5f) * s);
    ConvexShape b = MakeCapsule(rng.Uniform(0, 1) * s, rng.Uniform(0.05f, 0.5f) * s);
    PosedShape pb{&b, {rng.Rotation(), rng.InBox(s)}};
    PosedShape pa{&a, {rng.Rotation(), pb.pose.translation + rng.UnitVector() * (4 * s)}};
    Vec3 translation = (pb.pose.translation + rng.InBox(s) - pa.pose.translation) * 1.5f;
    double radii = a.convex_radius + b.convex_radius;
    D3 b0 = ToD(pb.pose.Apply({0, -b.half_height, 0})),
       b1 = ToD(pb.pose.Apply({0, b.half_height, 0}));
    auto gap = [&](double t) {
      D3 off = ToD(translation) * t;
      D3 a0 = ToD(pa.pose.Apply({0, -a.half_height, 0})) + off;
      D3 a1 = ToD(pa.pose.Apply({0, a.half_height, 0})) + off;
      return seg_dist(a0, a1, b0, b1) - radii;
    };
    if (gap(0) <= 0) continue;
    double lo = 0, hi = -1, min_gap = gap(0);
    for (int k = 1; k <= 256 && hi < 0; ++k) {
      double g = gap(k / 256.0);
      if (g <= 0)
        hi = k / 256.0;
      else
        lo = k / 256.0, min_gap = std::min(min_gap, g);
    }
    CastResult hit = GjkRaycast(pa, translation, pb);
    double len = Length(translation);
    if (hi < 0 || min_gap < len / 512 + 1e-4 * s) continue;  // miss or possible grazing
    for (int k = 0; k < 50; ++k) (gap(0.5 * (lo + hi)) <= 0 ? hi : lo) = 0.5 * (lo + hi);
    ++hits;
    ASSERT_TRUE(hit.hit) << i;
    ASSERT_NEAR(hit.fraction * len, hi * len, 1e-3 * s) << i;
  }
  std::printf("capsule-capsule casts vs distance bisection: %d hits of %d\n", hits, kCases);
  EXPECT_GT(hits, 1500);  // measured 1,826
}

}  // namespace
}  // namespace voxcol
