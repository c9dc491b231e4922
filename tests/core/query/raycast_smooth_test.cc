#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/mesh/marching_cubes.h"
#include "core/query/raycast.h"
#include "core/query/smooth_walk.h"
#include "core/query/validate.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr float kPi = 3.14159265f;
using Sdf = std::function<float(const Vec3&)>;  // voxel units, negative inside

// Occupancy from the signed distance at the voxel centre: clamp(0.5 - d, 0, 1).
std::unique_ptr<World> SdfWorld(Sdf sdf, Int3 size, float voxel_size) {
  return testing::MakeFunctionWorld(
      [sdf](const Int3& v) {
        float d = sdf(Vec3(v.x + 0.5f, v.y + 0.5f, v.z + 0.5f));
        return Voxel{kMaterialRock,
                     uint8_t(std::lround(std::clamp(0.5f - d, 0.0f, 1.0f) * 255.0f))};
      },
      size, voxel_size);
}

Vec3 Gradient(const Sdf& sdf, const Vec3& p) {
  const float e = 1e-2f;
  return Normalize(Vec3(sdf(p + Vec3(e, 0, 0)) - sdf(p - Vec3(e, 0, 0)),
                        sdf(p + Vec3(0, e, 0)) - sdf(p - Vec3(0, e, 0)),
                        sdf(p + Vec3(0, 0, e)) - sdf(p - Vec3(0, 0, e))));
}

struct AnalyticCase {
  Sdf sdf;
  // Returns a ray origin (outside, >= 2 voxels from the surface) and a target on the surface.
  std::function<void(std::mt19937&, Vec3*, Vec3*)> sample;
};

// Casts `rays` rays from outside at surface targets; every one must hit within `dist_bound` voxel
// of the analytic surface with a normal within `angle_bound` degrees of the analytic one (bounds
// within 3x of the measured worst, except where the 0.1 voxel / 10 degree target is tighter).
void CheckAnalytic(const char* name, const AnalyticCase& c, Int3 size, float h, int rays,
                   float dist_bound = 0.1f, float angle_bound = 10.0f) {
  auto world = SdfWorld(c.sdf, size, h);
  ChunkCollisionCache cache(*world, size_t(64) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(17);
  float max_dist = 0, max_angle = 0;
  int misses = 0;
  for (int i = 0; i < rays; ++i) {
    Vec3 from, to;  // voxel units
    c.sample(rng, &from, &to);
    RaycastInput ray{from * h, (to - from), Length(to - from) * h * 2.0f};
    ASSERT_TRUE(ValidateRaycast(*world, &ray, QueryLimits{}).ok());
    RaycastHit hit = RaycastSmooth(index, cache, ray, RaycastSettings{});
    if (!hit.hit || hit.started_inside) {
      if (misses < 5)
        std::printf("miss from (%g %g %g) to (%g %g %g) hit %d inside %d d %g\n", from.x, from.y,
                    from.z, to.x, to.y, to.z, hit.hit, hit.started_inside, hit.distance);
      ++misses;
      continue;
    }
    Vec3 p = hit.position / h;
    max_dist = std::max(max_dist, std::fabs(c.sdf(p)));
    float cosine = std::clamp(Dot(hit.normal, Gradient(c.sdf, p)), -1.0f, 1.0f);
    max_angle = std::max(max_angle, std::acos(cosine) * 180.0f / kPi);
  }
  std::printf(
      "%s: %d rays, %d misses, max distance to surface %.4f voxel (bound %.4f), max normal error "
      "%.2f deg (bound %.2f)\n",
      name, rays, misses, max_dist, dist_bound, max_angle, angle_bound);
  EXPECT_EQ(misses, 0);
  EXPECT_LE(max_dist, dist_bound);
  EXPECT_LE(max_angle, angle_bound);
}

Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> n;
  Vec3 v(n(rng), n(rng), n(rng));
  return LengthSq(v) > 1e-8f ? Normalize(v) : Vec3(0, 1, 0);
}

// Rays from random outside points aimed at random points of the inner 80% of the ball: they enter
// at up to asin(0.8) = 53 degrees from the normal. (Grazing rays can legitimately miss: the mesh
// lies up to ~0.1 voxel inside the analytic surface.)
TEST(RaycastSmoothTest, BallOfRadiusTenVoxelsIsHitOnTheAnalyticSurface) {
  const Vec3 center(0.37f, -1.21f, 2.53f);
  AnalyticCase ball{[center](const Vec3& p) { return Length(p - center) - 10.0f; },
                    [center](std::mt19937& rng, Vec3* from, Vec3* to) {
                      std::uniform_real_distribution<float> r(12.0f, 24.0f), inner(0.0f, 8.0f);
                      *from = center + RandomUnit(rng) * r(rng);
                      *to = center + RandomUnit(rng) * inner(rng);
                    }};
  // Measured 0.052 voxel and 8.2 deg at both voxel sizes.
  CheckAnalytic("ball r=10 voxels, h=0.5", ball, {64, 64, 64}, 0.5f, 5000, 0.1f, 10.0f);
  CheckAnalytic("ball r=10 voxels, h=1", ball, {64, 64, 64}, 1.0f, 5000, 0.1f, 10.0f);
}

// Rays from 2.5..12 voxels above the plane, at most 60 degrees from its normal.
TEST(RaycastSmoothTest, TiltedPlaneIsHitOnTheAnalyticSurface) {
  const Vec3 n = Normalize(Vec3(0.3f, 1.0f, -0.45f));
  AnalyticCase plane{[n](const Vec3& p) { return Dot(p, n) - 1.3f; },
                     [n](std::mt19937& rng, Vec3* from, Vec3* to) {
                       std::uniform_real_distribution<float> u(-12, 12), up(2.5f, 12.0f);
                       Vec3 q(u(rng), 0, u(rng));
                       *to = q - n * (Dot(q, n) - 1.3f);  // project onto the plane
                       Vec3 lateral = RandomUnit(rng);
                       lateral = Normalize(lateral - n * Dot(lateral, n) + n * 1e-3f);
                       std::uniform_real_distribution<float> tan_angle(0.0f, 1.732f);
                       float height = up(rng);
                       *from = *to + n * height + lateral * (height * tan_angle(rng));
                     }};
  CheckAnalytic("tilted plane", plane, {96, 96, 96}, 1.0f, 5000, 0.0065f,
                0.5f);  // measured 0.0023 voxel, 0.18 deg
}

// Box faces: targets stay 1.5 voxels away from edges, where the analytic normal jumps by 90
// degrees; origins lie outside the target's face plane, so rays reach the face first.
TEST(RaycastSmoothTest, BoxFacesAreHitOnTheAnalyticSurface) {
  const Vec3 half(9.3f, 6.7f, 11.1f), c(0.6f, -0.4f, 1.2f);
  auto sdf = [half, c](const Vec3& p) {
    Vec3 q(std::fabs(p.x - c.x) - half.x, std::fabs(p.y - c.y) - half.y,
           std::fabs(p.z - c.z) - half.z);
    Vec3 outside = Max(q, Vec3());
    return Length(outside) + std::min(std::max(q.x, std::max(q.y, q.z)), 0.0f);
  };
  AnalyticCase box{sdf, [half, c](std::mt19937& rng, Vec3* from, Vec3* to) {
                     int axis = rng() % 3;
                     float side = rng() % 2 ? 1.0f : -1.0f;
                     Vec3 t;
                     for (int a = 0; a < 3; ++a) {
                       std::uniform_real_distribution<float> u(-half[a] + 1.5f, half[a] - 1.5f);
                       t[a] = u(rng);
                     }
                     t[axis] = side * half[axis];
                     *to = c + t;
                     std::uniform_real_distribution<float> up(2.5f, 12.0f), lat(-6, 6);
                     Vec3 f = *to;
                     f[axis] += side * up(rng);
                     f[(axis + 1) % 3] += lat(rng);
                     f[(axis + 2) % 3] += lat(rng);
                     *from = f;
                   }};
  CheckAnalytic("box", box, {64, 64, 64}, 1.0f, 5000, 0.025f,
                10.0f);  // measured 0.0084 voxel, 7.0 deg
}

// Rays lying exactly in chunk seam planes (and along seam lines) through a closed ball must hit it.
TEST(RaycastSmoothTest, RaysGrazingChunkSeamsNeverPassThroughAClosedSurface) {
  const Vec3 center(8.5f, 8.5f, 8.5f);  // mesh chunk seams are the planes 8k + 0.5
  auto world =
      SdfWorld([center](const Vec3& p) { return Length(p - center) - 6.3f; }, {96, 96, 96}, 1.0f);
  ChunkCollisionCache cache(*world, size_t(64) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-5.5f, 5.5f), angle(0, 2 * kPi);
  int rays = 0, misses = 0;
  for (int i = 0; i < 6000; ++i) {
    int axis = i % 3;
    Vec3 target = center, dir;
    target[(axis + 1) % 3] += (i % 4 == 0) ? 0.0f : u(rng);  // every 4th ray along a seam line
    float a = angle(rng);
    dir[(axis + 1) % 3] = std::cos(a);
    dir[(axis + 2) % 3] = std::sin(a);
    Vec3 origin = target - dir * 20.0f;
    origin[axis] = center[axis];  // exactly in the seam plane
    RaycastInput ray{origin, dir, 40.0f};
    ASSERT_TRUE(ValidateRaycast(*world, &ray, QueryLimits{}).ok());
    RaycastHit hit = RaycastSmooth(index, cache, ray, RaycastSettings{});
    ++rays;
    misses += !hit.hit || hit.started_inside || !hit.front_face;
  }
  // And rays aimed exactly at mesh vertices on the seams.
  for (int dz = 0; dz < 2; ++dz)
    for (int dx = 0; dx < 2; ++dx) {
      ChunkMesh mesh = MeshChunk(*world, {dx, 0, dz});
      for (uint32_t i = 0; i < mesh.vertex_count(); ++i) {
        const Vec3 v = mesh.Vertex(i);
        if (v.x != 8.5f && v.z != 8.5f) continue;
        Vec3 out = Normalize(v - center);
        Vec3 origin = v + out * 15.0f;
        RaycastHit hit = RaycastSmooth(index, cache, {origin, -out, 30.0f}, RaycastSettings{});
        ++rays;
        misses += !hit.hit || hit.started_inside || std::fabs(hit.distance - 15.0f) > 1e-3f;
      }
    }
  std::printf("%d seam rays, %d misses\n", rays, misses);
  EXPECT_EQ(misses, 0);
}

// The voxel a smooth hit reports, from its definition: of the eight corner voxels of the
// marching-cubes cell around the point a hair (1e-3 voxel) behind the surface, along the facet
// normal of the triangle hit, the solid one of highest occupancy (the first in x, y, z bit order
// on ties), read through World::GetVoxel.
Int3 DominantCornerBehind(const World& world, const ChunkMesh& mesh, const RaycastHit& hit) {
  const float h = world.voxel_size();
  const Vec3 behind = hit.position - mesh.Normal(uint32_t(hit.triangle)) * (1e-3f * h);
  const Int3 low{int32_t(std::floor(behind.x / h - 0.5f)), int32_t(std::floor(behind.y / h - 0.5f)),
                 int32_t(std::floor(behind.z / h - 0.5f))};
  Int3 best = world.VoxelAt(behind);
  int best_occupancy = -1;
  for (int dz = 0; dz < 2; ++dz)
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const Int3 v = low + Int3{dx, dy, dz};
        const Voxel x = world.GetVoxel(v);
        if (IsSolid(x) && x.occupancy > best_occupancy) {
          best = v;
          best_occupancy = x.occupancy;
        }
      }
  return best;
}

// Whether the cell behind a smooth hit has its low corner in a chunk below the hit's mesh chunk,
// so that the hit reads its corners through the world rather than from the chunks the mesh was
// built from.
bool BehindTheChunksLowFaces(const World& world, const RaycastHit& hit, const ChunkMesh& mesh) {
  const float h = world.voxel_size();
  const Vec3 behind = hit.position - mesh.Normal(uint32_t(hit.triangle)) * (1e-3f * h);
  const Int3 low{int32_t(std::floor(behind.x / h - 0.5f)), int32_t(std::floor(behind.y / h - 0.5f)),
                 int32_t(std::floor(behind.z / h - 0.5f))};
  return !(ChunkOf(low) == hit.chunk);
}

// A smooth hit that does not start inside reports the dominant corner behind it, that voxel's
// occupancy and its triangle's material.
void CheckHitVoxel(const World& world, ChunkCollisionCache& cache, const RaycastHit& hit, int i) {
  ASSERT_GE(hit.triangle, 0) << i;
  ChunkCollisionPtr c = cache.Get(hit.chunk);
  ASSERT_LT(uint32_t(hit.triangle), c->mesh.triangle_count()) << i;
  const Int3 want = DominantCornerBehind(world, c->mesh, hit);
  EXPECT_EQ(hit.voxel, want) << i;
  EXPECT_EQ(hit.value.occupancy, world.GetVoxel(want).occupancy) << i;
  EXPECT_EQ(hit.value.material, c->mesh.Material(uint32_t(hit.triangle))) << i;
}

// The closest crossing of `ray` with every triangle of the chunks around its segment (brute force
// over the cached meshes), checked against RaycastSmooth's answer, and a hit's voxel against its
// definition (CheckHitVoxel). Returns whether it hit.
bool CheckAgainstBruteForce(const World& world, ChunkCollisionCache& cache,
                            const BroadphaseIndex& index, const RaycastInput& ray, int i) {
  RaycastHit hit = RaycastSmooth(index, cache, ray, RaycastSettings{});
  KdRay kray(ray.origin, Normalize(ray.direction));
  Vec3 end = ray.origin + kray.direction * ray.max_distance;
  Vec3 lo = Min(ray.origin, end) - Vec3(1, 1, 1), hi = Max(ray.origin, end) + Vec3(1, 1, 1);
  ClosestHitCollector brute(ray.max_distance);
  IntBox range = MeshedChunkRange(world);
  for (int y = std::max(range.min.y, int(std::floor(lo.y / 8)) - 1);
       y <= std::min(range.max.y - 1, int(hi.y / 8) + 1); ++y)
    for (int z = std::max(range.min.z, int(std::floor(lo.z / 8)) - 1);
         z <= std::min(range.max.z - 1, int(hi.z / 8) + 1); ++z)
      for (int x = std::max(range.min.x, int(std::floor(lo.x / 8)) - 1);
           x <= std::min(range.max.x - 1, int(hi.x / 8) + 1); ++x) {
        ChunkCollisionPtr c = cache.Get({x, y, z});
        for (uint32_t t = 0; t < c->mesh.triangle_count(); ++t) {
          float ht;
          if (IntersectRayTriangle(kray.watertight, c->mesh.Corner(t, 0), c->mesh.Corner(t, 1),
                                   c->mesh.Corner(t, 2), brute.early_out(), &ht) &&
              (!brute.has_hit() || ht < brute.hit().t)) {
            brute.AddHit({ht, t});
          }
        }
      }
  // A ray that starts inside reports its origin voxel.
  const Int3 origin_voxel = world.VoxelAt(ray.origin);
  const Voxel origin_value = world.GetVoxel(origin_voxel);
  if (hit.started_inside) {
    EXPECT_EQ(hit.voxel, origin_voxel) << i;
    EXPECT_EQ(hit.value.material, origin_value.material) << i;
    EXPECT_EQ(hit.value.occupancy, origin_value.occupancy) << i;
  }
  if (!brute.has_hit()) {
    // No crossing: started inside exactly when the origin voxel is solid, else a miss.
    EXPECT_EQ(hit.hit, hit.started_inside) << i;
    EXPECT_EQ(hit.started_inside, IsSolid(origin_value)) << i;
    return false;
  }
  EXPECT_TRUE(hit.hit) << i;
  if (hit.hit && !hit.started_inside) {  // else the first crossing was an exit
    EXPECT_NEAR(hit.distance, brute.hit().t, 1e-5f * brute.hit().t) << i;
    CheckHitVoxel(world, cache, hit, i);
  }
  return true;
}

// The chunk walk with early termination finds the same nearest hit as testing every triangle of
// every chunk the segment's box touches.
TEST(RaycastSmoothTest, CaveWorldHitsEqualBruteForceOverAllChunks) {
  auto world = testing::MakeCaveWorld(41, {64, 64, 64});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-31, 31), len(1, 40);
  int hits = 0;
  for (int i = 0; i < 1500; ++i) {
    RaycastInput ray{{u(rng), u(rng), u(rng)}, RandomUnit(rng), len(rng)};
    hits += CheckAgainstBruteForce(*world, cache, index, ray, i);
  }
  EXPECT_GT(hits, 300);
}

// Short rays, most of them in open air or deep rock (answered from the broadphase's class and
// uniform tables, without a tree): the same answers as the brute force, and a ray that starts
// inside reports its origin voxel. The rays are cast twice, before and after the tables know every
// chunk they meet (a chunk's class is known once its broadphase record is built).
TEST(RaycastSmoothTest, ShortRaysInAirAndDeepRockEqualBruteForce) {
  auto world = testing::MakeCaveWorld(5, {128, 96, 128});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> x(-63.9f, 63.9f), y(-47.9f, 47.9f), len(0.5f, 10);
  std::vector<RaycastInput> rays;
  for (int i = 0; i < 2000; ++i)
    rays.push_back({{x(rng), y(rng), x(rng)}, RandomUnit(rng), len(rng)});
  int deep = 0, clear = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < rays.size(); ++i) {
      CheckAgainstBruteForce(*world, cache, index, rays[i], int(i));
      const ChunkKey key = ChunkOf(world->VoxelAt(rays[i].origin));
      BroadphaseIndex::ReadScope scope(index);
      deep += pass == 1 && index.KnownFull(key, kClassSolid);
      clear += pass == 1 && !index.MayTouch(key, kClassSolid, scope);
    }
  }
  // Both kinds of table answers were exercised.
  EXPECT_GT(deep, 100);
  EXPECT_GT(clear, 100);
}

// Rays aimed at the mesh vertices of a row of chunks: vertices lie on cell edges, so many hits
// lie a hair from a cell face, and those on a chunk's low faces have the cell behind them in the
// chunk below, whose corners the hit reads through the world instead of from the chunks the mesh
// was built from. Both ways give the voxel its definition gives.
TEST(RaycastSmoothTest, HitVoxelIsTheDominantCornerBehindTheSurfaceAlsoAtChunkFaces) {
  auto world = testing::MakeCaveWorld(41, {64, 64, 64});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  int hits = 0, below = 0;
  for (int32_t x = -4; x < 4; x += 3)
    for (int32_t z = -4; z < 4; z += 3) {
      ChunkCollisionPtr c = cache.Get({x, -1, z});
      for (uint32_t v = 0; v < c->mesh.vertex_count(); ++v) {
        // From two voxels out along the vertex normal (into air, mostly), back at the vertex.
        const Vec3 n = Normalize(c->mesh.VertexNormal(v));
        const Vec3 target = c->mesh.Vertex(v);
        RaycastInput ray{target + n * 2.0f, n * -1.0f, 4.0f};
        if (!ValidateRaycast(*world, &ray, QueryLimits{}).ok()) continue;
        RaycastHit hit = RaycastSmooth(index, cache, ray, RaycastSettings{});
        if (!hit.hit || hit.started_inside) continue;
        ++hits;
        CheckHitVoxel(*world, cache, hit, int(v));
        below += BehindTheChunksLowFaces(*world, hit, cache.Get(hit.chunk)->mesh);
      }
    }
  std::printf("%d hits, %d with the cell behind in a chunk below\n", hits, below);
  EXPECT_GT(hits, 500);
  EXPECT_GT(below, 20);         // read through the world
  EXPECT_GT(hits - below, 20);  // from the mesh's corner chunks
}

TEST(RaycastSmoothTest, AllHitsThroughABallAreEntryThenExit) {
  const Vec3 center(0.5f, 0.5f, 0.5f);
  auto world =
      SdfWorld([center](const Vec3& p) { return Length(p - center) - 10.0f; }, {64, 64, 64}, 1.0f);
  ChunkCollisionCache cache(*world, size_t(64) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-6, 6);
  for (int i = 0; i < 500; ++i) {
    Vec3 dir = RandomUnit(rng);
    Vec3 origin = center - dir * 25.0f + Vec3(u(rng), u(rng), u(rng)) * 0.5f;
    RaycastInput ray{origin, dir, 50.0f};
    std::vector<RaycastHit> hits;
    RaycastSmoothAll(index, cache, ray, RaycastSettings{}, &hits);
    ASSERT_EQ(hits.size(), 2u) << i;
    EXPECT_TRUE(hits[0].front_face);
    EXPECT_LT(Dot(hits[0].normal, dir), 0);
    EXPECT_FALSE(hits[1].front_face);
    EXPECT_GT(Dot(hits[1].normal, dir), 0);
    RaycastHit first = RaycastSmooth(index, cache, ray, RaycastSettings{});
    EXPECT_EQ(first.distance, hits[0].distance);
    EXPECT_EQ(first.triangle, hits[0].triangle);
  }
}

TEST(RaycastSmoothTest, WaterStopsTheRayOnlyWhenAsked) {
  // Rock below y = -8, water from -8 up to 0, air above.
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    if (v.y < -8) return Voxel{kMaterialRock, 255};
    if (v.y < 0) return Voxel{kMaterialWater, 255};
    return Voxel{};
  });
  ChunkCollisionCache cache(*world, size_t(16) << 20);
  BroadphaseIndex index(*world);
  RaycastInput ray{{0.25f, 10.0f, 0.75f}, {0.1f, -1.0f, 0.05f}, 40.0f};
  RaycastSettings pass, stop;
  stop.water = WaterMode::kStopAtSurface;
  RaycastHit through = RaycastSmooth(index, cache, ray, pass);
  ASSERT_TRUE(through.hit);
  EXPECT_NEAR(through.position.y, -8.0f, 1e-4f);  // MC surface between centres -8.5 and -7.5
  EXPECT_GE(through.value.material, kMaterialRock);
  EXPECT_GE(through.triangle, 0);
  RaycastHit water = RaycastSmooth(index, cache, ray, stop);
  ASSERT_TRUE(water.hit);
  EXPECT_NEAR(water.position.y, 0.0f, 1e-4f);  // the top face of the water voxels
  EXPECT_EQ(water.value.material, kMaterialWater);
  EXPECT_EQ(water.triangle, -1);
  EXPECT_EQ(water.normal, Vec3(0, 1, 0));
  std::vector<RaycastHit> all;
  RaycastSmoothAll(index, cache, ray, stop, &all);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].value.material, kMaterialWater);
}

TEST(RaycastSmoothTest, OriginInsideSolidStartsInside) {
  auto world = SdfWorld([](const Vec3& p) { return Length(p) - 10.0f; }, {64, 64, 64}, 1.0f);
  ChunkCollisionCache cache(*world, size_t(16) << 20);
  BroadphaseIndex index(*world);
  RaycastHit deep =
      RaycastSmooth(index, cache, {{0.5f, 0.5f, 0.5f}, {1, 0, 0}, 3.0f}, RaycastSettings{});
  EXPECT_TRUE(deep.hit && deep.started_inside);
  RaycastHit exit =
      RaycastSmooth(index, cache, {{0.5f, 0.5f, 0.5f}, {1, 0, 0}, 30.0f}, RaycastSettings{});
  EXPECT_TRUE(exit.hit && exit.started_inside);
  EXPECT_EQ(exit.distance, 0.0f);
}

TEST(RaycastSmoothTest, BlockyModeIsTheDda) {
  auto world = testing::MakeCaveWorld(42, {64, 64, 64});
  ChunkCollisionCache cache(*world, size_t(16) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-31, 31);
  RaycastSettings blocky;
  blocky.mode = RaycastMode::kBlocky;
  for (int i = 0; i < 200; ++i) {
    RaycastInput ray{{u(rng), u(rng), u(rng)}, RandomUnit(rng), 30.0f};
    RaycastHit a = Raycast(index, cache, ray, blocky), b = RaycastBlocky(index, ray, blocky);
    EXPECT_EQ(a.hit, b.hit);
    EXPECT_EQ(a.distance, b.distance);
    EXPECT_EQ(a.voxel, b.voxel);
  }
}

// The smooth chunk walk against an independent one: at every step, from origins around and inside
// two worlds (20x12x28 chunks' worth of 0.75-unit voxels, centred, so partial chunks at both
// faces; and 64^3 unit voxels, whose faces lie on chunk planes), in random and in axis-aligned
// directions (+-0 components included), the walk's range and world tests equal MeshedChunkRange's
// and World::chunk_bounds' Contains (also before the walk enters and after it leaves, where its
// offsets wrap), in the world its class-table slot is the index's for the key, and the middle of
// its stretch through the current chunk lies in that mesh chunk (the voxel grid shifted by half a
// voxel, chunks of 8).
TEST(RaycastSmoothTest, ChunkWalkStepsThroughMeshChunksAndKnowsTheWorld) {
  const std::vector<std::unique_ptr<World>> worlds = [] {
    std::vector<std::unique_ptr<World>> w;
    w.push_back(
        testing::MakeFunctionWorld([](const Int3&) { return Voxel{}; }, {40, 24, 56}, 0.75f));
    w.push_back(
        testing::MakeFunctionWorld([](const Int3&) { return Voxel{}; }, {64, 64, 64}, 1.0f));
    return w;
  }();
  const BroadphaseIndex indexes[2] = {BroadphaseIndex(*worlds[0]), BroadphaseIndex(*worlds[1])};
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int checked = 0, in_world = 0, out_of_range = 0, aligned = 0;
  for (int i = 0; i < 1000; ++i) {
    const World& world = *worlds[i % 2];
    const IntBox range = MeshedChunkRange(world), chunks = world.chunk_bounds();
    const float h = world.voxel_size();
    const Aabb b = world.world_bounds();
    Vec3 o;
    for (int a = 0; a < 3; ++a) {  // up to two chunks beyond every face
      const float lo = Component(b.min, a) - 16 * h, hi = Component(b.max, a) + 16 * h;
      o[a] = lo + (hi - lo) * u(rng);
    }
    Vec3 d = RandomUnit(rng);
    if (i % 4 == 3) {  // along an axis, the other components +0 or -0
      const int axis = int(rng() % 3);
      for (int a = 0; a < 3; ++a)
        d[a] = a == axis ? (rng() % 2 ? 1.0f : -1.0f) : (rng() % 2 ? 0.0f : -0.0f);
      ++aligned;
    }
    const BroadphaseIndex& index = indexes[i % 2];
    smooth_walk::ChunkWalk walk(index, o, d);
    float t_enter = 0;
    for (int step = 0; step < 40; ++step, walk.Next()) {
      const ChunkKey key = walk.key();
      ASSERT_EQ(walk.InRange(), range.Contains(key)) << i << " " << step;
      ASSERT_EQ(walk.InWorld(), chunks.Contains(key)) << i << " " << step;
      if (walk.InWorld()) ASSERT_EQ(walk.slot(), index.SlotOf(key)) << i << " " << step;
      in_world += walk.InWorld();
      out_of_range += !walk.InRange();
      const float t_exit = walk.t_exit();
      if (t_exit - t_enter > 0.05f * h) {
        const Vec3 p = o + d * (0.5f * (t_enter + t_exit));
        const ChunkKey want{int32_t(std::floor((p.x / h - 0.5f) / kChunkSize)),
                            int32_t(std::floor((p.y / h - 0.5f) / kChunkSize)),
                            int32_t(std::floor((p.z / h - 0.5f) / kChunkSize))};
        ASSERT_EQ(key, want) << i << " " << step;
        ++checked;
      }
      t_enter = t_exit;
    }
  }
  EXPECT_EQ(aligned, 250);
  EXPECT_GT(checked, 15000);
  EXPECT_GT(in_world, 2000);
  EXPECT_GT(out_of_range, 4000);
}

}  // namespace
}  // namespace voxcol
