#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/query/raycast.h"
#include "core/query/validate.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// Oracle 1: exact entry distance into every filled voxel near the segment (slab test), minimum
// wins.
struct SlabHit {
  bool hit = false;
  float t = std::numeric_limits<float>::infinity();
  Int3 voxel;
};

SlabHit BruteForceSlabs(const World& world, const RaycastInput& ray) {
  Vec3 d = Normalize(ray.direction);
  Vec3 end = ray.origin + d * ray.max_distance;
  Int3 lo = world.VoxelAt(Min(ray.origin, end)), hi = world.VoxelAt(Max(ray.origin, end));
  SlabHit best;
  for (int y = lo.y; y <= hi.y; ++y)
    for (int z = lo.z; z <= hi.z; ++z)
      for (int x = lo.x; x <= hi.x; ++x) {
        if (!world.voxel_bounds().Contains({x, y, z}) || !IsSolid(world.GetVoxel({x, y, z})))
          continue;
        double t0 = 0, t1 = ray.max_distance;
        int v[3] = {x, y, z};
        bool miss = false;
        for (int a = 0; a < 3 && !miss; ++a) {
          double lo_a = v[a], hi_a = v[a] + 1.0;
          if (d[a] == 0) {
            miss = ray.origin[a] < lo_a || ray.origin[a] >= hi_a;
            continue;
          }
          double ta = (lo_a - ray.origin[a]) / d[a], tb = (hi_a - ray.origin[a]) / d[a];
          if (ta > tb) std::swap(ta, tb);
          t0 = std::max(t0, ta);
          t1 = std::min(t1, tb);
        }
        if (miss || t0 > t1) continue;
        if (t0 < best.t) best = {true, float(t0), {x, y, z}};
      }
  return best;
}

// Oracle 2: march in tiny steps and report the first sample inside a filled voxel.
SlabHit FineStepMarch(const World& world, const RaycastInput& ray, float dt) {
  Vec3 d = Normalize(ray.direction);
  for (float t = 0; t <= ray.max_distance; t += dt) {
    Int3 v = world.VoxelAt(ray.origin + d * t);
    if (world.voxel_bounds().Contains(v) && IsSolid(world.GetVoxel(v))) return {true, t, v};
  }
  return {};
}

RaycastInput RandomRay(std::mt19937& rng, const World& world, float max_len) {
  Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 1, b.max.x - 1), uy(b.min.y + 1, b.max.y - 1),
      uz(b.min.z + 1, b.max.z - 1), ud(-1, 1), ul(1, max_len);
  RaycastInput ray;
  ray.origin = {ux(rng), uy(rng), uz(rng)};
  do {
    ray.direction = {ud(rng), ud(rng), ud(rng)};
  } while (LengthSq(ray.direction) < 0.01f);
  ray.max_distance = ul(rng);
  return ray;
}

TEST(RaycastBlocky, MatchesBruteForceSlabsOnCaveWorld) {
  auto world = testing::MakeCaveWorld(11, {64, 64, 64});
  BroadphaseIndex index(*world);
  std::mt19937 rng(99);
  int hits = 0;
  for (int i = 0; i < 3000; ++i) {
    RaycastInput ray = RandomRay(rng, *world, 24);
    RaycastHit got = RaycastBlocky(index, ray, RaycastSettings{});
    SlabHit want = BruteForceSlabs(*world, ray);
    ASSERT_EQ(got.hit, want.hit) << "ray " << i;
    if (!want.hit) continue;
    ++hits;
    // Ties (a ray through an edge or corner enters two voxels at once) may pick either voxel.
    ASSERT_NEAR(got.distance, want.t, 1e-3f) << "ray " << i;
    EXPECT_TRUE(IsSolid(got.value));
  }
  EXPECT_GT(hits, 300);
}

TEST(RaycastBlocky, AgreesWithFineStepMarch) {
  auto world = testing::MakeCaveWorld(12, {64, 64, 64});
  BroadphaseIndex index(*world);
  std::mt19937 rng(7);
  const float dt = 1e-3f;
  int hits = 0;
  for (int i = 0; i < 400; ++i) {
    RaycastInput ray = RandomRay(rng, *world, 16);
    RaycastHit got = RaycastBlocky(index, ray, RaycastSettings{});
    SlabHit march = FineStepMarch(*world, ray, dt);
    if (march.hit) {
      // The march can only find a voxel at or after the exact entry, and within one step of it.
      ASSERT_TRUE(got.hit) << "ray " << i;
      ASSERT_GE(march.t, got.distance - 1e-4f) << "ray " << i;
      ASSERT_LE(march.t - got.distance, dt + 1e-4f) << "ray " << i;
      ++hits;
    } else if (got.hit) {
      // A march misses only voxels the ray clips for less than a step (corners) or the very end.
      SlabHit exact = BruteForceSlabs(*world, ray);
      ASSERT_TRUE(exact.hit);
      EXPECT_GT(exact.t, ray.max_distance - dt - 1e-3f) << "ray " << i;
    }
  }
  EXPECT_GT(hits, 40);
}

TEST(RaycastBlocky, StraightDownHitsTheTopFaceOfAFlatFloor) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return v.y < -5 ? Voxel{kMaterialRock, 255} : Voxel{};
  });
  RaycastHit hit = RaycastBlocky(BroadphaseIndex(*world), {{0.5f, 10.0f, -3.25f}, {0, -2, 0}, 100},
                                 RaycastSettings{});
  ASSERT_TRUE(hit.hit);
  EXPECT_FLOAT_EQ(hit.distance, 15.0f);
  EXPECT_EQ(hit.normal, (Vec3{0, 1, 0}));
  EXPECT_EQ(hit.voxel, (Int3{0, -6, -4}));
  EXPECT_EQ(hit.value.material, kMaterialRock);
  EXPECT_FLOAT_EQ(hit.position.y, -5.0f);
}

TEST(RaycastBlocky, HalfOccupancyIsTheSolidThreshold) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    if (v.x == 3) return Voxel{kMaterialRock, 127};
    if (v.x == 6) return Voxel{kMaterialRock, 128};
    return Voxel{};
  });
  RaycastHit hit = RaycastBlocky(BroadphaseIndex(*world), {{0.5f, 0.5f, 0.5f}, {1, 0, 0}, 20},
                                 RaycastSettings{});
  ASSERT_TRUE(hit.hit);
  EXPECT_EQ(hit.voxel.x, 6);
  EXPECT_FLOAT_EQ(hit.distance, 5.5f);
  EXPECT_EQ(hit.normal, (Vec3{-1, 0, 0}));
}

TEST(RaycastBlocky, WaterStopsTheRayOnlyWhenAsked) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    if (v.y < -10) return Voxel{kMaterialRock, 255};
    if (v.y < 0) return Voxel{kMaterialWater, 255};
    return Voxel{};
  });
  RaycastInput ray{{0.5f, 5.5f, 0.5f}, {0, -1, 0}, 50};
  RaycastHit through =
      RaycastBlocky(BroadphaseIndex(*world), ray, RaycastSettings{WaterMode::kPassThrough});
  RaycastHit stop =
      RaycastBlocky(BroadphaseIndex(*world), ray, RaycastSettings{WaterMode::kStopAtSurface});
  ASSERT_TRUE(through.hit && stop.hit);
  EXPECT_FLOAT_EQ(through.distance, 15.5f);
  EXPECT_EQ(through.value.material, kMaterialRock);
  EXPECT_FLOAT_EQ(stop.distance, 5.5f);
  EXPECT_EQ(stop.value.material, kMaterialWater);
}

TEST(RaycastBlocky, StartingInsideReportsDistanceZero) {
  auto world = testing::MakeFunctionWorld([](const Int3&) { return Voxel{kMaterialRock, 255}; });
  RaycastHit hit = RaycastBlocky(BroadphaseIndex(*world), {{1.5f, 1.5f, 1.5f}, {0, 1, 0}, 10},
                                 RaycastSettings{});
  ASSERT_TRUE(hit.hit);
  EXPECT_TRUE(hit.started_inside);
  EXPECT_EQ(hit.distance, 0.0f);
  EXPECT_EQ(hit.normal, Vec3{});
}

TEST(RaycastBlocky, StopsAtMaxDistanceAndAtTheWorldBoundary) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return v.x == 10 ? Voxel{kMaterialRock, 255} : Voxel{};
  });
  EXPECT_FALSE(
      RaycastBlocky(BroadphaseIndex(*world), {{0.5f, 0, 0}, {1, 0, 0}, 9.4f}, RaycastSettings{})
          .hit);
  EXPECT_TRUE(
      RaycastBlocky(BroadphaseIndex(*world), {{0.5f, 0, 0}, {1, 0, 0}, 9.6f}, RaycastSettings{})
          .hit);
  QueryStats stats;
  EXPECT_FALSE(RaycastBlocky(BroadphaseIndex(*world), {{0.5f, 0, 0}, {-1, 0, 0}, 1000},
                             RaycastSettings{}, &stats)
                   .hit);
  EXPECT_LE(stats.voxels_visited, 33u);  // 32 voxels from x=0 to the boundary at -32
}

TEST(RaycastBlocky, HonoursVoxelSize) {
  auto world = testing::MakeFunctionWorld(
      [](const Int3& v) {
        return v.y < 0 ? Voxel{kMaterialRock, 255} : Voxel{};
      },
      {64, 64, 64}, 0.25f);
  RaycastHit hit = RaycastBlocky(BroadphaseIndex(*world), {{1.0f, 2.0f, 1.0f}, {0, -1, 0}, 10},
                                 RaycastSettings{});
  ASSERT_TRUE(hit.hit);
  EXPECT_FLOAT_EQ(hit.distance, 2.0f);
  EXPECT_EQ(hit.voxel, (Int3{4, -1, 4}));
}

TEST(ValidateRaycast, RejectsBadInputNamingTheField) {
  auto world = testing::MakeEmptyWorld();
  QueryLimits limits;
  struct Bad {
    RaycastInput ray;
    const char* field;
  } cases[] = {
      {{{NAN, 0, 0}, {0, -1, 0}, 10}, "origin"},
      {{{0, 0, INFINITY}, {0, -1, 0}, 10}, "origin"},
      {{{0, 40, 0}, {0, -1, 0}, 10}, "origin"},
      {{{0, 0, 0}, {0, 0, 0}, 10}, "direction"},
      {{{0, 0, 0}, {NAN, 1, 0}, 10}, "direction"},
      {{{0, 0, 0}, {0, -1, 0}, 0}, "max_distance"},
      {{{0, 0, 0}, {0, -1, 0}, NAN}, "max_distance"},
      {{{0, 0, 0}, {0, -1, 0}, 1e9f}, "max_distance"},
  };
  for (Bad& bad : cases) {
    absl::Status s = ValidateRaycast(*world, &bad.ray, limits);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(bad.field), std::string::npos) << s;
  }
  // Any finite non-zero length is accepted and normalized in place (in double: |d|^2 of these
  // overflows or underflows in float).
  for (float scale : {1e-3f, 1e-30f, 1e30f, 3e38f}) {
    RaycastInput ray{{0, 0, 0}, {0, -scale, 0}, 10};
    ASSERT_TRUE(ValidateRaycast(*world, &ray, limits).ok()) << scale;
    EXPECT_EQ(ray.direction, Vec3(0, -1, 0)) << scale;
  }
  RaycastInput skew{{0, 0, 0}, {3e37f, -4e37f, 0}, 10};
  ASSERT_TRUE(ValidateRaycast(*world, &skew, limits).ok());
  EXPECT_NEAR(skew.direction.x, 0.6f, 1e-7f);
  EXPECT_NEAR(skew.direction.y, -0.8f, 1e-7f);
}

// A direction 1e30 long hits exactly like the unit one (before, |d|^2 overflowed and the ray
// silently missed).
TEST(ValidateRaycast, HugeDirectionHitsLikeAUnitOne) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return v.y < 0 ? Voxel{kMaterialRock, 255} : Voxel{};
  });
  BroadphaseIndex index(*world);
  QueryLimits limits;
  RaycastInput unit{{0.5f, 10.5f, 0.5f}, {0.1f, -1, 0.2f}, 100};
  RaycastInput huge{{0.5f, 10.5f, 0.5f}, {1e29f, -1e30f, 2e29f}, 100};
  ASSERT_TRUE(ValidateRaycast(*world, &unit, limits).ok());
  ASSERT_TRUE(ValidateRaycast(*world, &huge, limits).ok());
  RaycastHit a = RaycastBlocky(index, unit, RaycastSettings{});
  RaycastHit b = RaycastBlocky(index, huge, RaycastSettings{});
  ASSERT_TRUE(a.hit);
  ASSERT_TRUE(b.hit);
  EXPECT_NEAR(b.distance, a.distance, 1e-5f);
  EXPECT_EQ(b.voxel, a.voxel);
}

}  // namespace
}  // namespace voxcol
