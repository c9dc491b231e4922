// Sphere and capsule casts against a triangle vs a sampled-and-bisected distance oracle.
#include "core/narrowphase/cast_vs_triangle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/geometry/closest_point.h"
#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::D3;
using testing::ToD;

// First t in [0, 1] with gap(t) <= 0, by sampling then bisection, or -1 for a miss. gap is
// Lipschitz with constant `speed`, so a contact cannot hide between samples when every sample
// before it stays above speed / (2 kSteps); cases closer than that are reported as ambiguous (-2).
template <typename Gap>
double FirstContact(Gap gap, double speed, double slack) {
  constexpr int kSteps = 512;
  double prev = 0;
  for (int k = 0; k <= kSteps; ++k) {
    double t = double(k) / kSteps, g = gap(t);
    if (g <= 0) {
      if (k == 0) return 0;
      double lo = prev, hi = t;
      for (int i = 0; i < 60; ++i) {
        double mid = 0.5 * (lo + hi);
        (gap(mid) <= 0 ? hi : lo) = mid;
      }
      return hi;
    }
    if (g < speed / (2 * kSteps) + slack) return -2;
    prev = t;
  }
  return -1;
}

struct Scene {
  float s;
  Vec3 a, b, c, start, translation;
};

Scene RandomScene(CaseRng& rng) {
  Scene sc;
  sc.s = rng.Scale();
  sc.a = rng.InBox(sc.s), sc.b = rng.InBox(sc.s), sc.c = rng.InBox(sc.s);
  sc.start = rng.InBox(3 * sc.s);
  Vec3 target =
      sc.a + (sc.b - sc.a) * rng.Uniform(-0.3f, 1) + (sc.c - sc.a) * rng.Uniform(-0.3f, 1);
  sc.translation = (target - sc.start) * rng.Uniform(0.5f, 1.5f);
  return sc;
}

bool Degenerate(const Scene& sc) {
  return Length(Cross(sc.b - sc.a, sc.c - sc.a)) < 1e-2f * sc.s * sc.s ||
         Length(sc.translation) < 1e-2f * sc.s;
}

TEST(CastVsTriangleTest, SphereMatchesSampledOracle) {
  CaseRng rng(701);
  int hits = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    Scene sc = RandomScene(rng);
    float r = rng.Uniform(0.05f, 0.5f) * sc.s;
    if (Degenerate(sc)) continue;
    D3 c0 = ToD(sc.start), d = ToD(sc.translation);
    auto gap = [&](double t) {
      return testing::PointTriangleDist(c0 + d * t, ToD(sc.a), ToD(sc.b), ToD(sc.c)) - r;
    };
    double toi = FirstContact(gap, testing::LenD(d), 1e-4 * sc.s);
    if (toi == -2 || toi == 0) continue;
    CastResult hit = CastSphereVsTriangle(sc.start, r, sc.translation, sc.a, sc.b, sc.c);
    ASSERT_EQ(hit.hit, toi >= 0) << i;
    if (toi < 0) continue;
    ++hits;
    double len = testing::LenD(d);
    ASSERT_NEAR(hit.fraction * len, toi * len, 1e-4 * sc.s) << i;
    Vec3 centre = sc.start + sc.translation * hit.fraction;
    ASSERT_NEAR(testing::PointTriangleDist(ToD(hit.point), ToD(sc.a), ToD(sc.b), ToD(sc.c)), 0,
                1e-4 * sc.s)
        << i;
    ASSERT_NEAR(Length(centre - hit.point), r, 1e-4 * sc.s) << i;
    ASSERT_GT(Dot(hit.normal, Normalize(centre - hit.point)), 1 - 1e-4) << i;
  }
  EXPECT_GT(hits, testing::kCases / 10);  // the rest miss, start touching or graze
}

TEST(CastVsTriangleTest, GjkRaycastSphereAgreesWithClosedForm) {
  CaseRng rng(702);
  for (int i = 0; i < testing::kCases; ++i) {
    Scene sc = RandomScene(rng);
    float r = rng.Uniform(0.05f, 0.5f) * sc.s;
    if (Degenerate(sc)) continue;
    CastResult closed = CastSphereVsTriangle(sc.start, r, sc.translation, sc.a, sc.b, sc.c);
    ConvexShape sphere = MakeSphere(r);
    CastResult gjk =
        CastConvexVsTriangle({&sphere, {{}, sc.start}}, sc.translation, sc.a, sc.b, sc.c);
    if (closed.initially_overlapping) {
      ASSERT_TRUE(gjk.initially_overlapping) << i;
      continue;
    }
    if (closed.hit != gjk.hit) {
      // Only grazing contacts may differ: the path passes within tolerance of the surface.
      double min_gap = 1e30;
      for (int k = 0; k <= 256; ++k) {
        Vec3 p = sc.start + sc.translation * (k / 256.0f);
        min_gap = std::min(min_gap,
                           testing::PointTriangleDist(ToD(p), ToD(sc.a), ToD(sc.b), ToD(sc.c)) - r);
      }
      ASSERT_LT(min_gap, 1e-2 * sc.s) << i;
      continue;
    }
    if (!closed.hit) continue;
    float len = Length(sc.translation);
    ASSERT_NEAR(gjk.fraction * len, closed.fraction * len, 1e-3 * sc.s) << i;
    ASSERT_GT(Dot(gjk.normal, closed.normal), 1 - 1e-3) << i;
  }
}

// Capsule sweeps over terrain use the closed form CastCapsuleVsTriangle; other convex shapes go
// through CastConvexVsTriangle (GJK-raycast). Both against the oracle.
TEST(CastVsTriangleTest, CapsuleMatchesSampledOracle) {
  CaseRng rng(703);
  int hits = 0;
  // 1,000 cases, not 10,000: the oracle runs a ternary search per sample (10,000 took > 75 s).
  for (int i = 0; i < 1000; ++i) {
    Scene sc = RandomScene(rng);
    float r = rng.Uniform(0.05f, 0.3f) * sc.s, h = rng.Uniform(0, 0.5f) * sc.s;
    Quat q = rng.Rotation();
    if (Degenerate(sc)) continue;
    Vec3 axis = q.Rotate({0, h, 0});
    D3 d = ToD(sc.translation);
    auto gap = [&](double t) {
      D3 c = ToD(sc.start) + d * t;
      return testing::SegmentTriangleDist(c - ToD(axis), c + ToD(axis), ToD(sc.a), ToD(sc.b),
                                          ToD(sc.c)) -
             r;
    };
    double toi = FirstContact(gap, testing::LenD(d), 1e-3 * sc.s);
    if (toi == -2 || toi == 0) continue;
    ConvexShape capsule = MakeCapsule(h, r);
    CastResult hit =
        CastConvexVsTriangle({&capsule, {q, sc.start}}, sc.translation, sc.a, sc.b, sc.c);
    ASSERT_EQ(hit.hit, toi >= 0) << i;
    ASSERT_EQ(
        CastCapsuleVsTriangle(sc.start - axis, sc.start + axis, r, sc.translation, sc.a, sc.b, sc.c)
            .hit,
        toi >= 0)
        << i;
    if (toi < 0) continue;
    ++hits;
    double len = testing::LenD(d);
    ASSERT_NEAR(hit.fraction * len, toi * len, 1e-3 * sc.s) << i;
    ASSERT_NEAR(testing::PointTriangleDist(ToD(hit.point), ToD(sc.a), ToD(sc.b), ToD(sc.c)), 0,
                1e-3 * sc.s)
        << i;
    // The closed form: the same time, a point on the triangle at the radius from the moved
    // segment, and the normal from that point toward the segment.
    CastResult closed = CastCapsuleVsTriangle(sc.start - axis, sc.start + axis, r, sc.translation,
                                              sc.a, sc.b, sc.c);
    ASSERT_TRUE(closed.hit && !closed.initially_overlapping) << i;
    ASSERT_NEAR(closed.fraction * len, toi * len, 1e-4 * sc.s) << i;
    ASSERT_NEAR(testing::PointTriangleDist(ToD(closed.point), ToD(sc.a), ToD(sc.b), ToD(sc.c)), 0,
                1e-4 * sc.s)
        << i;
    const Vec3 moved = sc.start + sc.translation * closed.fraction;
    const D3 core = ToD(moved);
    ASSERT_NEAR(testing::PointSegmentDist(ToD(closed.point), core - ToD(axis), core + ToD(axis)), r,
                1e-4 * sc.s)
        << i;
    const Vec3 nearest = ClosestPointOnSegment(closed.point, moved - axis, moved + axis);
    ASSERT_GT(Dot(closed.normal, Normalize(nearest - closed.point)), 1 - 1e-4) << i;
  }
  std::printf("capsule vs triangle casts: %d hits of 1000\n", hits);
  EXPECT_GT(hits, 40);  // measured 68
}

// The closed-form capsule cast against GJK-raycast on many more cases than the sampled oracle can
// afford, with capsules up to four times the triangle's size, so that the side of the segment
// meets the triangle's vertices and edges, not only the end spheres.
TEST(CastVsTriangleTest, GjkRaycastCapsuleAgreesWithClosedForm) {
  CaseRng rng(704);
  int hits = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    Scene sc = RandomScene(rng);
    if (Degenerate(sc)) continue;
    float r = rng.Uniform(0.05f, 0.3f) * sc.s, h = rng.Uniform(0, 2) * sc.s;
    Quat q = rng.Rotation();
    const Vec3 axis = q.Rotate({0, h, 0});
    CastResult closed = CastCapsuleVsTriangle(sc.start - axis, sc.start + axis, r, sc.translation,
                                              sc.a, sc.b, sc.c);
    ConvexShape capsule = MakeCapsule(h, r);
    CastResult gjk =
        CastConvexVsTriangle({&capsule, {q, sc.start}}, sc.translation, sc.a, sc.b, sc.c);
    if (closed.initially_overlapping || gjk.initially_overlapping) {
      // Only a start within GJK's tolerance of touching may differ.
      const double gap = testing::SegmentTriangleDist(ToD(sc.start - axis), ToD(sc.start + axis),
                                                      ToD(sc.a), ToD(sc.b), ToD(sc.c)) -
                         r;
      if (closed.initially_overlapping != gjk.initially_overlapping) {
        ASSERT_LT(std::fabs(gap), 1e-3 * sc.s) << i;
      } else {
        ASSERT_LT(gap, 1e-3 * sc.s) << i;
      }
      continue;
    }
    if (closed.hit != gjk.hit) {
      // Only grazing contacts may differ: the path passes within tolerance of the surface.
      double min_gap = 1e30;
      for (int k = 0; k <= 256; ++k) {
        const D3 c = ToD(sc.start + sc.translation * (k / 256.0f));
        min_gap = std::min(min_gap, testing::SegmentTriangleDist(c - ToD(axis), c + ToD(axis),
                                                                 ToD(sc.a), ToD(sc.b), ToD(sc.c)) -
                                        r);
      }
      ASSERT_LT(min_gap, 1e-2 * sc.s) << i;
      continue;
    }
    if (!closed.hit) continue;
    ++hits;
    const float len = Length(sc.translation);
    ASSERT_NEAR(gjk.fraction * len, closed.fraction * len, 1e-3 * sc.s) << i;
    ASSERT_GT(Dot(gjk.normal, closed.normal), 1 - 1e-3) << i;
  }
  EXPECT_GT(hits, testing::kCases / 10);
}

// A motion whose squared length underflows to 0 (a character's last sliver of a step; found by the
// query fuzzer) is no motion: apart stays a miss, touching reports the initial overlap, and
// nothing divides by it.
TEST(CastVsTriangleTest, MotionTooShortToSquareIsNoMotion) {
  const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 0, 1);
  for (const float length : {0.0f, 1e-30f, 1e-20f}) {
    const Vec3 motion(0, -length, 0);
    for (const float height : {0.2f, 1.0f}) {  // touching (radius 0.25), apart
      const Vec3 centre(0.25f, height, 0.25f);
      const CastResult sphere = CastSphereVsTriangle(centre, 0.25f, motion, a, b, c);
      const CastResult capsule = CastCapsuleVsTriangle(
          centre - Vec3(0.1f, 0, 0), centre + Vec3(0.1f, 0, 0), 0.25f, motion, a, b, c);
      for (const CastResult& r : {sphere, capsule}) {
        EXPECT_EQ(r.hit, height < 0.25f) << length << " " << height;
        EXPECT_EQ(r.initially_overlapping, height < 0.25f) << length << " " << height;
        EXPECT_TRUE(std::isfinite(r.fraction)) << length << " " << height;
      }
    }
  }
}

// A radius whose square underflows (the fuzzer's 1.4e-45) leaves no distance between the contact
// and the shape's core to take the normal from: the hit still has a finite unit normal, the
// face's, turned against the motion. A segment above the face, falling onto it across an edge.
TEST(CastVsTriangleTest, RadiusTooSmallToSquareStillGivesAUnitNormal) {
  const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 0, 1);
  for (const float radius : {1.4e-45f, 1e-30f, 1e-20f}) {
    for (const float fall : {-2.0f, 2.0f}) {  // onto the top and onto the bottom
      const Vec3 motion(0, fall, 0);
      const float y = fall < 0 ? 1.0f : -1.0f;
      const CastResult capsule =
          CastCapsuleVsTriangle(Vec3(-1, y, 0.25f), Vec3(2, y, 0.25f), radius, motion, a, b, c);
      const CastResult sphere = CastSphereVsTriangle(Vec3(0, y, 0.25f), radius, motion, a, b, c);
      for (const CastResult& r : {capsule, sphere}) {
        ASSERT_TRUE(r.hit) << radius << " " << fall;
        EXPECT_NEAR(r.fraction, 0.5f, 1e-6f) << radius << " " << fall;
        EXPECT_NEAR(Length(r.normal), 1.0f, 1e-6f) << radius << " " << fall;
        EXPECT_EQ(r.normal.y, fall < 0 ? 1.0f : -1.0f) << radius << " " << fall;
      }
    }
  }
}

}  // namespace
}  // namespace voxcol
