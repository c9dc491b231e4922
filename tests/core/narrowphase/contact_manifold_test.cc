#include "core/narrowphase/contact_manifold.h"

#include <gtest/gtest.h>

#include <set>

#include "core/geometry/transform.h"
#include "tests/core/narrowphase/random_cases.h"

namespace voxcol {
namespace {

using testing::CaseRng;

TEST(ContactManifoldTest, GridOnRotatedPlaneKeepsTheFourCorners) {
  CaseRng rng(801);
  for (int trial = 0; trial < 100; ++trial) {
    Quat q = rng.Rotation();
    Vec3 n = q.Rotate({0, 1, 0});
    ManifoldPoint pts[35];
    int count = 0;
    for (int x = 0; x < 5; ++x) {
      for (int z = 0; z < 7; ++z) {
        pts[count++] = {q.Rotate({float(x), 0, float(z)}), n, 0.01f * rng.Uniform(0, 1)};
      }
    }
    pts[0].depth = 1;  // the deepest is the (0, 0) corner
    ManifoldPoint out[kMaxManifoldPoints];
    ASSERT_EQ(ReduceContacts(pts, count, n, out), 4);
    std::set<std::pair<int, int>> corners;
    for (const ManifoldPoint& c : out) {
      Vec3 local = q.Conjugate().Rotate(c.position);
      corners.insert({int(std::lround(local.x)), int(std::lround(local.z))});
    }
    EXPECT_EQ(corners, (std::set<std::pair<int, int>>{{0, 0}, {4, 0}, {0, 6}, {4, 6}}));
  }
}

TEST(ContactManifoldTest, KeepsDeepestAndReturnsDistinctInputPoints) {
  CaseRng rng(802);
  int ties = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    int count = 1 + int(rng.Uniform(0, 30));
    Vec3 n = rng.UnitVector();
    ManifoldPoint pts[32];
    int deepest = 0;
    for (int i = 0; i < count; ++i) {
      pts[i] = {rng.InBox(1), n, rng.Uniform(0, 1)};
      if (pts[i].depth > pts[deepest].depth) deepest = i;
    }
    ManifoldPoint out[kMaxManifoldPoints];
    int kept = ReduceContacts(pts, count, n, out);
    ASSERT_GE(kept, 1);
    ASSERT_LE(kept, std::min(count, 4));
    // The anchor is the deepest point, or one as deep within 1e-3 of the points' spread (< 0.0035
    // for points in the unit box).
    EXPECT_GE(out[0].depth, pts[deepest].depth - 0.0035f);
    if (out[0].position != pts[deepest].position) ++ties;
    for (int i = 0; i < kept; ++i) {
      for (int j = 0; j < i; ++j) ASSERT_NE(out[i].position, out[j].position);
    }
  }
  EXPECT_LE(ties, 100);  // near-ties are rare with uniform depths
}

// A face lying on a face: every point equally deep. The anchor is then a corner of the contact
// area, so the four kept points are the four corners, not an interior point and three corners.
TEST(ContactManifoldTest, EquallyDeepPointsKeepTheFourCorners) {
  const Vec3 n{0, 1, 0};
  ManifoldPoint pts[25];
  int count = 0;
  // Interior points first, so "the first of the deepest" would pick one of them.
  for (int x = 1; x <= 3; ++x)
    for (int z = 1; z <= 3; ++z) pts[count++] = {{float(x), 0, float(z)}, n, 0.1f};
  for (int x = 0; x <= 4; x += 4)
    for (int z = 0; z <= 4; z += 4) pts[count++] = {{float(x), 0, float(z)}, n, 0.1f};
  ManifoldPoint out[kMaxManifoldPoints];
  ASSERT_EQ(ReduceContacts(pts, count, n, out), 4);
  std::set<std::pair<int, int>> corners;
  for (const ManifoldPoint& c : out) corners.insert({int(c.position.x), int(c.position.z)});
  EXPECT_EQ(corners, (std::set<std::pair<int, int>>{{0, 0}, {4, 0}, {0, 4}, {4, 4}}));
}

TEST(ContactManifoldTest, CollinearPointsGiveTwoAndCoincidentGiveOne) {
  Vec3 n{0, 1, 0};
  ManifoldPoint line[5], same[3];
  for (int i = 0; i < 5; ++i) line[i] = {{float(i), 0, 0}, n, float(i == 2)};
  for (int i = 0; i < 3; ++i) same[i] = {{1, 2, 3}, n, float(i)};
  ManifoldPoint out[kMaxManifoldPoints];
  ASSERT_EQ(ReduceContacts(line, 5, n, out), 2);
  EXPECT_EQ(out[0].position.x, 2);
  EXPECT_EQ(std::abs(out[1].position.x - 2), 2);
  EXPECT_EQ(ReduceContacts(same, 3, n, out), 1);
  EXPECT_EQ(ReduceContacts(line, 0, n, out), 0);
}

}  // namespace
}  // namespace voxcol
