#include "core/narrowphase/collide_vs_triangle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::ToD;

// A random triangle at scale s; false when it is too thin to be a useful case.
bool RandomTriangle(CaseRng& rng, float s, Vec3* a, Vec3* b, Vec3* c) {
  *a = rng.InBox(s), *b = rng.InBox(s), *c = rng.InBox(s);
  return Length(Cross(*b - *a, *c - *a)) >= 1e-2f * s * s;
}

ConvexShape RandomBox(CaseRng& rng, float s) {
  return MakeBox({rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s});
}

// The contact lies on the triangle, and moving the shape by (depth + e) along the normal leaves a
// gap of e to it, judged by GJK distance (validated against closed forms in gjk_test.cc).
::testing::AssertionResult IsMinimumTranslation(const TriangleCollision& r, const PosedShape& p,
                                                const Vec3& a, const Vec3& b, const Vec3& c,
                                                float s) {
  const double off = testing::PointTriangleDist(ToD(r.contact.position), ToD(a), ToD(b), ToD(c));
  if (!(off <= 1e-4 * s)) {  // written so that NaN fails too
    return ::testing::AssertionFailure() << "contact " << off << " off the triangle";
  }
  const float e = 1e-3f * s;
  const ConvexShape tri = MakeTriangle(a, b, c);
  PosedShape moved = p;
  moved.pose.translation += r.contact.normal * (r.contact.depth + e);
  const GjkResult gap = GjkDistance({&tri, {}}, moved);
  if (gap.overlapping) return ::testing::AssertionFailure() << "still overlapping after the MTD";
  if (!(std::fabs(gap.distance - e) <= 1e-4 * s)) {
    return ::testing::AssertionFailure() << "gap " << gap.distance << " instead of " << e;
  }
  return ::testing::AssertionSuccess();
}

// Where only the rounded parts overlap, GJK/EPA through CollideConvexVsTriangle and the closed
// forms must agree: the same depth (radius - core distance) and the same normal.
TEST(CollideVsTriangleTest, ConvexPathMatchesCapsuleClosedForm) {
  CaseRng rng(901);
  int tested = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a, b, c;
    if (!RandomTriangle(rng, s, &a, &b, &c)) continue;
    ConvexShape capsule = MakeCapsule(rng.Uniform(0, 0.5f) * s, rng.Uniform(0.1f, 0.6f) * s);
    PosedShape pc{&capsule, {rng.Rotation(), rng.InBox(1.5f * s)}};
    Vec3 p0, p1;
    pc.CapsuleSegment(&p0, &p1);
    TriangleCollision closed = CollideCapsuleVsTriangle(p0, p1, capsule.convex_radius, a, b, c);
    if (!closed.overlapping || closed.contact.depth >= capsule.convex_radius - 1e-3f * s) continue;
    ++tested;
    TriangleCollision gjk = CollideConvexVsTriangle(pc, a, b, c);
    ASSERT_TRUE(gjk.overlapping) << i;
    ASSERT_NEAR(gjk.contact.depth, closed.contact.depth, 1e-4 * s) << i;
    ASSERT_GT(Dot(gjk.contact.normal, closed.contact.normal), 1 - 1e-3) << i;
    ASSERT_NEAR(Length(gjk.contact.position - closed.contact.position), 0, 1e-3 * s) << i;
  }
  EXPECT_GT(tested, 500);
}

// Boxes vs triangles: no closed form; moving the box by (depth + e) * normal must leave a gap of e
// to the triangle, judged by GJK distance (validated against closed forms in gjk_test.cc).
TEST(CollideVsTriangleTest, BoxMtdJustSeparates) {
  CaseRng rng(902);
  int tested = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a, b, c;
    if (!RandomTriangle(rng, s, &a, &b, &c)) continue;
    ConvexShape box = RandomBox(rng, s);
    PosedShape pb{&box, {rng.Rotation(), rng.InBox(s)}};
    TriangleCollision r = CollideConvexVsTriangle(pb, a, b, c);
    if (!r.overlapping || r.contact.depth < 2e-3f * s) continue;
    ++tested;
    ASSERT_TRUE(IsMinimumTranslation(r, pb, a, b, c, s)) << i;
  }
  EXPECT_GT(tested, 1000);
}

// The 13-axis SAT of sharp boxes vs EPA on the same pairs: the same depth, a normal that is a
// minimum translation too (moving the box by depth + e along it leaves a gap of e, by GJK), the
// contact point on the triangle; separated pairs are separated for both, and the SAT separation
// never exceeds the GJK distance (it is a lower bound).
TEST(CollideVsTriangleTest, BoxSatMatchesEpa) {
  CaseRng rng(903);
  int overlapping = 0, separated = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a, b, c;
    if (!RandomTriangle(rng, s, &a, &b, &c)) continue;
    ConvexShape box = RandomBox(rng, s);
    PosedShape pb{&box, {rng.Rotation(), rng.InBox(s)}};
    TriangleCollision sat = CollideBoxVsTriangle(pb, a, b, c);
    TriangleCollision epa = CollideConvexVsTriangle(pb, a, b, c);
    ConvexShape tri = MakeTriangle(a, b, c);
    if (!epa.overlapping) {
      ASSERT_FALSE(sat.overlapping && sat.contact.depth > 1e-4f * s) << i;
      if (!sat.overlapping) {
        ++separated;
        ASSERT_LE(-sat.contact.depth, GjkDistance({&tri, {}}, pb).distance + 1e-4f * s) << i;
      }
      continue;
    }
    if (epa.contact.depth < 2e-3f * s) continue;  // touching: either answer is fine
    ++overlapping;
    ASSERT_TRUE(sat.overlapping) << i;
    ASSERT_NEAR(sat.contact.depth, epa.contact.depth, 1e-4 * s) << i;
    ASSERT_TRUE(IsMinimumTranslation(sat, pb, a, b, c, s)) << i;
  }
  EXPECT_GT(overlapping, 1000);
  EXPECT_GT(separated, 1000);
}

TEST(CollideVsTriangleTest, SphereRestingOnGround) {
  TriangleCollision r =
      CollideSphereVsTriangle({0.2f, 0.45f, 0.1f}, 0.5f, {-5, 0, -5}, {0, 0, 5}, {5, 0, -5});
  ASSERT_TRUE(r.overlapping);
  EXPECT_NEAR(r.contact.depth, 0.05f, 1e-6f);
  EXPECT_NEAR(r.contact.normal.y, 1, 1e-6f);
  EXPECT_NEAR(r.contact.position.y, 0, 1e-6f);
}

// Found by the query fuzzer: a hull listing the origin 53 times (and near-duplicate points)
// touching a terrain triangle. GJK ends on a touch (depth 0) whose simplex repeats support
// points; the contact must still be a finite point on the triangle with a unit normal, and the
// minimum translation must hold.
TEST(CollideVsTriangleTest, HullWithRepeatedPointsTouchingATriangleGivesAFiniteContact) {
  std::vector<Vec3> points(60, Vec3{0, 0, 0});
  points[0] = {0x1.3b3b38p+1f, 0x1.3b3b3cp+1f, 0x1.3b3b3cp+1f};
  points[1] = points[2] = points[3] = {0x1.3b3b3cp+1f, 0x1.3b3b3cp+1f, 0x1.3b3b3cp+1f};
  points[4] = {0x1.3b3b3cp+1f, 0x1.3b3b3cp+1f, 0x1.36b63p+0f};
  points[5] = {0x1.f9f34cp+1f, 0x1.8745d4p+1f, -0x1.cp+1f};
  points[6] = {-4, 0, 0};
  const ConvexShape hull = MakeConvexHull(points.data(), int(points.size()));
  const PosedShape posed{&hull, {}};
  const Vec3 a{0x1p-2f, 0x1p-2f, 0x1.3978p+0f}, b{0x1p-2f, 0x1.1a2p-2f, 0x1.4p+0f},
      c{0x1.794p-1f, 0x1.8p-1f, 0x1.8p-1f};
  const TriangleCollision r = CollideConvexVsTriangle(posed, a, b, c);
  ASSERT_TRUE(std::isfinite(r.contact.position.x) && std::isfinite(r.contact.position.y) &&
              std::isfinite(r.contact.position.z));
  EXPECT_NEAR(Length(r.contact.normal), 1, 1e-5f);
  EXPECT_TRUE(IsMinimumTranslation(r, posed, a, b, c, 4));  // the hull spans ~8 units
}

}  // namespace
}  // namespace voxcol
