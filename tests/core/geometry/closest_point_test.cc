#include "core/geometry/closest_point.h"

#include <gtest/gtest.h>

#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::ToD;

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

}  // namespace
}  // namespace voxcol
