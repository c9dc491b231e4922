#include "core/geometry/triangle_contact.h"

#include <gtest/gtest.h>

#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::ToD;

TEST(TriangleContactTest, SphereVsTriangleMatchesDistanceOracle) {
  CaseRng rng(601);
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a = rng.InBox(s), b = rng.InBox(s), c = rng.InBox(s);
    if (Length(Cross(b - a, c - a)) < 1e-3f * s * s) continue;
    Vec3 p = rng.InBox(2 * s);
    float r = rng.Uniform(0.05f, 1) * s;
    TriangleContact tc = SphereVsTriangle(p, r, a, b, c);
    double expected = testing::PointTriangleDist(ToD(p), ToD(a), ToD(b), ToD(c)) - r;
    ASSERT_NEAR(tc.distance, expected, 1e-5 * s) << i;
    ASSERT_EQ(tc.overlapping, tc.distance < 0);
    // The normal points from the triangle point to the centre.
    if (expected > -r + 1e-3 * s) {
      ASSERT_GT(Dot(tc.normal, Normalize(p - tc.point_on_triangle)), 1 - 1e-4) << i;
    }
  }
}

TEST(TriangleContactTest, CapsuleVsTriangleMatchesDistanceOracle) {
  CaseRng rng(602);
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a = rng.InBox(s), b = rng.InBox(s), c = rng.InBox(s);
    if (Length(Cross(b - a, c - a)) < 1e-3f * s * s) continue;
    Vec3 p0 = rng.InBox(2 * s), p1 = rng.InBox(2 * s);
    float r = rng.Uniform(0.05f, 1) * s;
    TriangleContact tc = CapsuleVsTriangle(p0, p1, r, a, b, c);
    double core = testing::SegmentTriangleDist(ToD(p0), ToD(p1), ToD(a), ToD(b), ToD(c));
    if (core > 1e-4 * s) {
      ASSERT_NEAR(tc.distance, core - r, 1e-4 * s) << i;
    } else {
      ASSERT_TRUE(tc.overlapping) << i;
      ASSERT_LE(tc.distance, -r + 1e-4 * s) << i;
    }
  }
}

TEST(TriangleContactTest, CapsuleThroughGroundPushesUp) {
  // A vertical capsule whose axis pierces the ground triangle: bottom end 0.3 below.
  TriangleContact tc =
      CapsuleVsTriangle({0, -0.3f, 0}, {0, 1, 0}, 0.5f, {-5, 0, -5}, {0, 0, 5}, {5, 0, -5});
  ASSERT_TRUE(tc.overlapping);
  EXPECT_NEAR(tc.distance, -0.8f, 1e-6f);
  EXPECT_NEAR(tc.normal.y, 1, 1e-6f);
}

}  // namespace
}  // namespace voxcol
