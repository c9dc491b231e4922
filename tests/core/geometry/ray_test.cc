// Moller-Trumbore ray-triangle and Williams ray-box slabs against double-precision oracles.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/geometry/ray_aabb.h"
#include "core/geometry/ray_triangle.h"
#include "core/geometry/vec3.h"
#include "tests/core/geometry/geometry_oracles.h"

namespace voxcol {
namespace {

using testing::CaseRng;
using testing::D3;
using testing::ToD;

// FloorToInt against std::floor: every float in [-1025, 1025] at steps of 1/64 plus its
// neighbours one ulp away (integers, halves, +-0 included), and random floats up to 2^31 in
// magnitude, where floats above 2^24 are integers.
TEST(FloorToIntTest, EqualsStdFloor) {
  int checked = 0;
  for (int k = -1025 * 64; k <= 1025 * 64; ++k) {
    const float x = float(k) / 64.0f;
    for (float y : {x, std::nextafter(x, -2000.0f), std::nextafter(x, 2000.0f)}) {
      ASSERT_EQ(FloorToInt(y), int32_t(std::floor(y))) << y;
      ++checked;
    }
  }
  EXPECT_EQ(FloorToInt(-0.0f), 0);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-2147483520.0f, 2147483520.0f);
  std::uniform_real_distribution<float> small(-16777216.0f, 16777216.0f);
  for (int i = 0; i < 200000; ++i) {
    const float y = i % 2 ? u(rng) : small(rng);
    ASSERT_EQ(FloorToInt(y), int32_t(std::floor(y))) << y;
    ++checked;
  }
  EXPECT_EQ(checked, 3 * (2 * 1025 * 64 + 1) + 200000);
}

TEST(RayTriangleTest, MatchesPlaneIntersectionAndEdgeSides) {
  CaseRng rng(501);
  int hits = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 a = rng.InBox(s), b = rng.InBox(s), c = rng.InBox(s);
    // Aim at a point near the triangle so that about half the rays hit.
    float u = rng.Uniform(-0.3f, 1), v = rng.Uniform(-0.3f, 1);
    Vec3 o = rng.InBox(3 * s), target = a + (b - a) * u + (c - a) * v;
    Vec3 d = (target - o) * rng.Uniform(0.5f, 1.5f);
    RayTriangleHit hit = RayTriangle(o, d, a, b, c, 1.0f);
    // Oracle: t from the plane equation, inside from edge sides, in double.
    D3 n = testing::CrossD(ToD(b) - ToD(a), ToD(c) - ToD(a));
    double denom = testing::DotD(n, ToD(d));
    if (std::fabs(denom) < 1e-3 * testing::LenD(n) * testing::LenD(ToD(d))) continue;
    double t = testing::DotD(n, ToD(a) - ToD(o)) / denom;
    D3 q = ToD(o) + ToD(d) * t;
    double e[3] = {testing::DotD(testing::CrossD(ToD(b) - ToD(a), q - ToD(a)), n),
                   testing::DotD(testing::CrossD(ToD(c) - ToD(b), q - ToD(b)), n),
                   testing::DotD(testing::CrossD(ToD(a) - ToD(c), q - ToD(c)), n)};
    double nn = testing::DotD(n, n);
    double margin = 1e-4 * nn;  // skip rays within a hair of an edge or of t = 0 or 1
    if (std::fabs(e[0]) < margin || std::fabs(e[1]) < margin || std::fabs(e[2]) < margin ||
        std::fabs(t) < 1e-4 || std::fabs(t - 1) < 1e-4) {
      continue;
    }
    bool expected = e[0] > 0 && e[1] > 0 && e[2] > 0 && t >= 0 && t <= 1;
    ASSERT_EQ(hit.hit, expected) << i;
    if (!expected) continue;
    ++hits;
    ASSERT_NEAR(hit.t, t, 1e-4 * std::max(1.0, t)) << i;
  }
  EXPECT_GT(hits, 1000);
}

TEST(RayAabbTest, MatchesPerAxisIntervals) {
  CaseRng rng(502);
  int hits = 0;
  for (int i = 0; i < testing::kCases; ++i) {
    float s = rng.Scale();
    Vec3 c = rng.InBox(s),
         h{rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s, rng.Uniform(0.1f, 1) * s};
    Aabb box{c - h, c + h};
    Vec3 o = rng.InBox(3 * s), d = (c + Mul(rng.InBox(1.5f), h) - o) * rng.Uniform(0.3f, 1.5f);
    for (int k = 0; k < 3; ++k) {
      if (rng.Chance(0.1f)) d[k] = 0;  // axis-parallel rays exercise the infinities
    }
    if (d == Vec3{}) continue;
    // Oracle: intersect the per-axis parameter intervals explicitly.
    double t0 = 0, t1 = 1;
    bool empty = false;
    for (int k = 0; k < 3; ++k) {
      if (d[k] == 0) {
        if (o[k] < box.min[k] || o[k] > box.max[k]) empty = true;
        continue;
      }
      double ta = (double(box.min[k]) - o[k]) / d[k], tb = (double(box.max[k]) - o[k]) / d[k];
      t0 = std::max(t0, std::min(ta, tb));
      t1 = std::min(t1, std::max(ta, tb));
    }
    bool expected = !empty && t0 <= t1;
    if (!empty && std::fabs(t0 - t1) < 1e-5) continue;  // grazing
    RayAabbHit hit = RayAabb(SlabRay(o, d), box, 0, 1);
    ASSERT_EQ(hit.hit, expected) << i;
    if (!expected) continue;
    ++hits;
    ASSERT_NEAR(hit.t_enter, t0, 1e-5) << i;
    ASSERT_NEAR(hit.t_exit, t1, 1e-5) << i;
  }
  EXPECT_GT(hits, 1000);
}

}  // namespace
}  // namespace voxcol
