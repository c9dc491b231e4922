// The smooth raycast against an independent double-precision oracle (query_oracles.h): no
// WatertightRay, IntersectRayTriangle or KdRay on the oracle side, so a bug in the shared ray
// setup (which the kD-tree and brute-force tests of the same routine cannot see) shows up here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "core/query/raycast.h"
#include "tests/core/query/query_oracles.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

using testing::D3;
using testing::OracleClosestRay;
using testing::OracleRayHit;
using testing::ToD;

Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> n;
  Vec3 v(n(rng), n(rng), n(rng));
  return LengthSq(v) > 1e-8f ? Normalize(v) : Vec3(0, 1, 0);
}

// The oracle's unit direction in double, from the same float direction the query gets.
D3 UnitD(const Vec3& d) {
  D3 v = ToD(d);
  return v * (1 / testing::LenD(v));
}

// Whether a ray starts inside terrain, against the oracle: inside exactly when its nearest crossing
// is an exit (a back face), or, with no crossing within reach, when its origin voxel is solid.
// Origins are drawn in rock, in air and just off the surface (the cells of the raycast's
// started-inside shortcuts: uniform rock chunks, and cells whose eight corners are solid), and
// rays are short or long so that both the shortcut and the walk answer.
TEST(RaycastOracleTest, StartedInsideExactlyWhenTheOracleSeesAnExitFirst) {
  auto world = testing::MakeCaveWorld(43, {64, 64, 64});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  const std::vector<testing::OracleTriangle> tris = testing::AllTriangles(*world);
  std::mt19937 rng(2302);
  std::uniform_real_distribution<float> u(-31, 31), len(0.05f, 30), jitter(-1.5f, 1.5f);
  int inside = 0, outside = 0, near_surface = 0, mismatched = 0, ambiguous = 0;
  for (int i = 0; i < 10000; ++i) {
    Vec3 origin(u(rng), u(rng), u(rng));
    if (i % 2 == 0 && !tris.empty()) {  // near the surface: around a random triangle's corner
      const testing::OracleTriangle& t = tris[rng() % tris.size()];
      origin =
          Vec3(float(t.a.x) + jitter(rng), float(t.a.y) + jitter(rng), float(t.a.z) + jitter(rng));
      ++near_surface;
    }
    const RaycastInput ray{origin, RandomUnit(rng), len(rng)};
    const RaycastHit hit = RaycastSmooth(index, cache, ray, RaycastSettings{});
    const OracleRayHit oracle =
        OracleClosestRay(tris, ToD(ray.origin), UnitD(ray.direction), ray.max_distance);
    // A crossing within float error of an edge or of the origin may flip between the two sides.
    if (oracle.hit && (oracle.clearance < 1e-4 || oracle.t < 1e-4)) {
      ++ambiguous;
      continue;
    }
    const bool want = oracle.hit ? !oracle.front : IsSolid(world->GetVoxel(world->VoxelAt(origin)));
    const bool got = hit.hit && hit.started_inside;
    inside += want;
    outside += !want;
    if (got != want && ++mismatched <= 5) {
      std::printf("ray %d from (%g, %g, %g): started_inside %d, oracle %d (hit %d at %g)\n", i,
                  origin.x, origin.y, origin.z, got, want, oracle.hit, oracle.t);
    }
  }
  std::printf(
      "started inside vs oracle: %d inside, %d outside (%d origins near the surface), %d "
      "ambiguous skipped, %d mismatched\n",
      inside, outside, near_surface, ambiguous, mismatched);
  EXPECT_EQ(mismatched, 0);
  EXPECT_GT(inside, 2000);
  EXPECT_GT(outside, 2000);
  EXPECT_LT(ambiguous, 50);
}

// 10,000 random rays in a cave world (also rays with a tiny component and axis-aligned ones): the
// nearest crossing equals the oracle's over every triangle of every chunk.
TEST(RaycastOracleTest, CaveWorldRaycastEqualsDoublePrecisionBruteForce) {
  auto world = testing::MakeCaveWorld(41, {64, 64, 64});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  const std::vector<testing::OracleTriangle> tris = testing::AllTriangles(*world);
  std::mt19937 rng(2301);
  std::uniform_real_distribution<float> u(-31, 31), len(1, 40);
  int hits = 0, misses = 0, inside = 0, mismatched = 0;
  double max_error = 0;
  constexpr double kBound = 2.5e-5;  // voxel; measured 8.4e-6
  for (int i = 0; i < 10000; ++i) {
    Vec3 dir = RandomUnit(rng);
    if (i % 10 == 1) dir[i % 3] = 1e-4f * dir[i % 3];  // a tiny component
    if (i % 10 == 2) dir = Vec3(0, 0, 0), dir[(i / 10) % 3] = (i / 30) % 2 ? 1.0f : -1.0f;
    // Origins in the open (a solid voxel is drawn again) so that most rays have a crossing.
    Vec3 origin(u(rng), u(rng), u(rng));
    for (int k = 0; k < 20 && world->GetVoxel(world->VoxelAt(origin)).occupancy > 0; ++k)
      origin = Vec3(u(rng), u(rng), u(rng));
    const RaycastInput ray{origin, dir, len(rng)};
    const RaycastHit hit = RaycastSmooth(index, cache, ray, RaycastSettings{});
    const OracleRayHit oracle =
        OracleClosestRay(tris, ToD(ray.origin), UnitD(ray.direction), ray.max_distance);
    if (hit.hit && hit.started_inside) {
      ++inside;
      continue;
    }
    if (hit.hit != oracle.hit) {
      if (++mismatched <= 5)
        std::printf("ray %d: raycast hit %d at %g, oracle hit %d at %g (clearance %g)\n", i,
                    hit.hit, hit.distance, oracle.hit, oracle.t, oracle.clearance);
      continue;
    }
    if (!hit.hit) {
      ++misses;
      continue;
    }
    ++hits;
    max_error = std::max(max_error, std::fabs(hit.distance - oracle.t));
  }
  std::printf(
      "cave raycasts vs double oracle: %d hits, %d misses, %d started inside, %d mismatched; max "
      "distance error %.2e voxel (bound %.1e)\n",
      hits, misses, inside, mismatched, max_error, kBound);
  EXPECT_EQ(mismatched, 0);
  EXPECT_GE(hits, 1400);  // measured 1,644
  EXPECT_GE(misses, 5000);
  EXPECT_LE(max_error, kBound);
}

// The watertight test (rays exactly in chunk seam planes, along seam lines and through seam
// vertices of a closed ball) checked by distance against the oracle, not only for a hit.
TEST(RaycastOracleTest, SeamRaysHitWhereTheDoubleOracleSays) {
  const Vec3 center(8.5f, 8.5f, 8.5f);  // mesh chunk seams are the planes 8k + 0.5
  auto world = testing::MakeFunctionWorld(
      [center](const Int3& v) {
        const float d = Length(Vec3(v.x + 0.5f, v.y + 0.5f, v.z + 0.5f) - center) - 6.3f;
        return Voxel{kMaterialRock,
                     uint8_t(std::lround(std::clamp(0.5f - d, 0.0f, 1.0f) * 255.0f))};
      },
      {96, 96, 96}, 1.0f);
  ChunkCollisionCache cache(*world, size_t(64) << 20);
  BroadphaseIndex index(*world);
  const std::vector<testing::OracleTriangle> tris = testing::AllTriangles(*world);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-5.5f, 5.5f), angle(0, 6.2831853f);
  int rays = 0, failures = 0, oracle_misses = 0;
  double max_error = 0;
  constexpr double kBound = 1.5e-5;  // voxel; measured 5.3e-6
  auto check = [&](const Vec3& origin, const Vec3& dir, float length) {
    const RaycastHit hit = RaycastSmooth(index, cache, {origin, dir, length}, RaycastSettings{});
    const OracleRayHit oracle = OracleClosestRay(tris, ToD(origin), UnitD(dir), length);
    ++rays;
    oracle_misses += !oracle.hit;
    if (!hit.hit || hit.started_inside || !hit.front_face || !oracle.hit || !oracle.front) {
      ++failures;
      return;
    }
    max_error = std::max(max_error, std::fabs(hit.distance - oracle.t));
  };
  for (int i = 0; i < 6000; ++i) {
    const int axis = i % 3;
    Vec3 target = center, dir;
    target[(axis + 1) % 3] += (i % 4 == 0) ? 0.0f : u(rng);  // every 4th ray along a seam line
    const float a = angle(rng);
    dir[(axis + 1) % 3] = std::cos(a);
    dir[(axis + 2) % 3] = std::sin(a);
    Vec3 origin = target - dir * 20.0f;
    origin[axis] = center[axis];  // exactly in the seam plane
    check(origin, dir, 40.0f);
  }
  for (int dz = 0; dz < 2; ++dz)
    for (int dx = 0; dx < 2; ++dx) {
      ChunkMesh mesh = MeshChunk(*world, {dx, 0, dz});
      for (uint32_t i = 0; i < mesh.vertex_count(); ++i) {
        const Vec3 v = mesh.Vertex(i);
        if (v.x != 8.5f && v.z != 8.5f) continue;
        const Vec3 out = Normalize(v - center);
        check(v + out * 15.0f, -out, 30.0f);
      }
    }
  std::printf(
      "seam rays vs double oracle: %d rays, %d failures (%d oracle misses), max distance error "
      "%.2e voxel (bound %.1e)\n",
      rays, failures, oracle_misses, max_error, kBound);
  EXPECT_EQ(failures, 0);
  EXPECT_GE(rays, 6000);
  EXPECT_LE(max_error, kBound);
}

}  // namespace
}  // namespace voxcol
