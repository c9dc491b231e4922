#include "core/geometry/closest_point.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::ToD;

// A random triangle in the box of scale s; false for a sliver (doubled area under 1e-2 s^2).
bool WideTriangle(CaseRng& rng, float s, Vec3* a, Vec3* b, Vec3* c) {
  *a = rng.InBox(s), *b = rng.InBox(s), *c = rng.InBox(s);
  return Length(Cross(*b - *a, *c - *a)) > 1e-2f * s * s;
}

TEST(ClosestPointTest, PointTriangleMatchesProjectionOracle) {
  CaseRng rng(401);
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a = rng.InBox(s), b = rng.InBox(s), c = rng.InBox(s), p = rng.InBox(2 * s);
    Vec3 q = ClosestPointOnTriangle(p, a, b, c);
    double expected = testing::PointTriangleDist(ToD(p), ToD(a), ToD(b), ToD(c));
    ASSERT_NEAR(Length(p - q), expected, 1e-5 * s) << i;
    // q lies on the triangle.
    ASSERT_NEAR(testing::PointTriangleDist(ToD(q), ToD(a), ToD(b), ToD(c)), 0, 1e-5 * s) << i;
  }
}

// A point built from barycentrics, lifted off the plane, projects inside exactly when all three
// are non-negative, whichever way round and however long the normal given is.
TEST(ClosestPointTest, ProjectsIntoTriangleMatchesBarycentrics) {
  CaseRng rng(405);
  int inside = 0, tested = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    const float s = rng.Scale();
    Vec3 a, b, c;
    if (!WideTriangle(rng, s, &a, &b, &c)) continue;
    const Vec3 n = Cross(b - a, c - a);
    const float u = rng.Uniform(-0.5f, 1.5f), v = rng.Uniform(-0.5f, 1.5f);
    const float w = 1 - u - v;
    if (std::min({std::fabs(u), std::fabs(v), std::fabs(w)}) < 1e-3f) continue;  // on an edge
    const Vec3 x = a * w + b * u + c * v + Normalize(n) * (rng.Uniform(-1, 1) * s);
    const bool expected = u >= 0 && v >= 0 && w >= 0;
    const Vec3 given = n * (rng.Chance(0.5f) ? -rng.Uniform(0.1f, 10) : rng.Uniform(0.1f, 10));
    ASSERT_EQ(ProjectsIntoTriangle(x, a, b, c, given), expected) << i;
    inside += expected;
    ++tested;
  }
  EXPECT_GT(inside, tested / 20);  // both answers are exercised
  EXPECT_LT(inside, tested);
}

TEST(ClosestPointTest, SegmentSegmentMatchesTernarySearch) {
  CaseRng rng(402);
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 p0 = rng.InBox(s), p1 = rng.Chance(0.1f) ? p0 : rng.InBox(s);
    Vec3 q0 = rng.InBox(s), q1 = rng.Chance(0.1f) ? q0 : rng.InBox(s);
    if (rng.Chance(0.1f)) q1 = q0 + (p1 - p0) * 0.7f;  // parallel
    SegmentPair r = ClosestPointsSegmentSegment(p0, p1, q0, q1);
    double expected = testing::SegmentSegmentDist(ToD(p0), ToD(p1), ToD(q0), ToD(q1));
    ASSERT_NEAR(Length(r.on_first - r.on_second), expected, 1e-5 * s) << i;
    ASSERT_NEAR(testing::PointSegmentDist(ToD(r.on_first), ToD(p0), ToD(p1)), 0, 1e-5 * s);
    ASSERT_NEAR(testing::PointSegmentDist(ToD(r.on_second), ToD(q0), ToD(q1)), 0, 1e-5 * s);
  }
}

TEST(ClosestPointTest, SegmentTriangleMatchesTernarySearch) {
  CaseRng rng(403);
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a = rng.InBox(s), b = rng.InBox(s), c = rng.InBox(s);
    Vec3 p0 = rng.InBox(2 * s), p1 = rng.InBox(2 * s);
    SegmentPair r = ClosestPointsSegmentTriangle(p0, p1, a, b, c);
    double expected = testing::SegmentTriangleDist(ToD(p0), ToD(p1), ToD(a), ToD(b), ToD(c));
    ASSERT_NEAR(Length(r.on_first - r.on_second), expected, 1e-4 * s) << i;
  }
}

// Segments close to the triangle's plane, where the face and the edges compete: nearly parallel,
// with endpoints projecting inside and outside, just crossing the plane, or touching it. The
// points returned must lie on the segment and on the triangle, and be as far apart as the oracle.
TEST(ClosestPointTest, SegmentTriangleNearThePlaneMatchesTernarySearch) {
  CaseRng rng(404);
  int face = 0, crossing = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    const float s = rng.Scale();
    Vec3 a, b, c;
    if (!WideTriangle(rng, s, &a, &b, &c)) continue;
    const Vec3 unit = Normalize(Cross(b - a, c - a));
    // A point over the triangle's neighbourhood (barycentrics in [-0.5, 1.5]) at a small height.
    auto near_plane = [&] {
      const float u = rng.Uniform(-0.5f, 1.5f), v = rng.Uniform(-0.5f, 1.5f - u);
      const float height = rng.Chance(0.1f) ? 0.0f : rng.Uniform(-0.2f, 0.2f) * s;
      return a + (b - a) * u + (c - a) * v + unit * height;
    };
    const Vec3 p0 = near_plane();
    Vec3 p1 = near_plane();
    if (rng.Chance(0.2f)) p1 = p1 + unit * (Dot(p0 - p1, unit));  // parallel to the plane
    SegmentPair r = ClosestPointsSegmentTriangle(p0, p1, a, b, c);
    double expected = testing::SegmentTriangleDist(ToD(p0), ToD(p1), ToD(a), ToD(b), ToD(c));
    ASSERT_NEAR(Length(r.on_first - r.on_second), expected, 1e-4 * s) << i;
    ASSERT_NEAR(testing::PointSegmentDist(ToD(r.on_first), ToD(p0), ToD(p1)), 0, 1e-4 * s) << i;
    ASSERT_NEAR(testing::PointTriangleDist(ToD(r.on_second), ToD(a), ToD(b), ToD(c)), 0, 1e-4 * s)
        << i;
    const Vec3 gap = r.on_first - r.on_second;
    crossing += expected < 1e-6 * s;
    face += expected > 1e-3 * s && std::fabs(Dot(gap, unit)) > 0.9999f * Length(gap);
  }
  // Both the crossing and the face shortcuts were taken often.
  EXPECT_GT(crossing, testing::kCases / 50);
  EXPECT_GT(face, testing::kCases / 20);
}

}  // namespace
}  // namespace voxcol
