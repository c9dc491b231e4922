// Whether a shape with no surface near it is buried: Overlap, Contacts and Sweep against an
// independent inside test (the first crossing of a brute-force ray over every mesh triangle leaves
// the solid). The poses the queries once got wrong are counted on their own: a centre in open
// space whose voxel is solid (the surface crosses that voxel's cell below its centre sample).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/sweep.h"
#include "tests/core/query/query_oracles.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

using testing::D3;
using testing::OracleTriangle;
using testing::ToD;

// Poses just off a random triangle, on either side, by more than the queries' contact margins,
// for spheres and for upright capsules (whose centre and top often lie in different cells, so
// either may decide).
void CheckBuriedAgainstOracle(const ConvexShape& shape, float half_height, uint32_t seed) {
  auto world = testing::MakeCaveWorld(3, {64, 48, 64});
  ChunkCollisionCache cache(*world, size_t(64) << 20);
  BroadphaseIndex index(*world);
  const std::vector<OracleTriangle> tris = testing::AllTriangles(*world);
  const float radius = shape.convex_radius;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, tris.size() - 1);
  std::uniform_real_distribution<double> gap(0.03, 0.6), unit(-1, 1);
  int poses = 0, inside = 0, open_in_solid_voxel = 0, wrong[3] = {0, 0, 0};
  for (int i = 0; i < 6000; ++i) {
    const OracleTriangle& at = tris[pick(rng)];
    const double side = i % 2 == 0 ? 1 : -1;
    const D3 off = at.n * (side * (radius + gap(rng)));
    // The core segment's end nearest the triangle sits off its centroid.
    const D3 up{0, half_height, 0};
    const D3 c = (at.a + at.b + at.c) * (1.0 / 3) + off + (off.y >= 0 ? up : up * -1.0);
    double nearest = 1e9;
    for (const OracleTriangle* t : testing::NearSegment(tris, c - up, c + up, radius + 0.05)) {
      nearest = std::min(nearest, testing::SegmentTriangleDist(c - up, c + up, t->a, t->b, t->c));
    }
    if (nearest < radius + 0.02) continue;  // the surface is near: not the question here
    // Oracle: a random direction's first crossing (none, or too near an edge: skip the pose).
    D3 d{unit(rng), unit(rng), unit(rng)};
    if (testing::LenD(d) < 0.1) continue;
    d = d * (1 / testing::LenD(d));
    const testing::OracleRayHit first = testing::OracleClosestRay(tris, c, d, 200);
    if (!first.hit || first.clearance < 1e-4) continue;
    const bool in_solid = !first.front;
    const Vec3 centre(float(c.x), float(c.y), float(c.z));
    if (!world->world_bounds().Contains(centre)) continue;
    ++poses;
    inside += in_solid;
    open_in_solid_voxel += !in_solid && IsSolid(world->GetVoxel(world->VoxelAt(centre)));
    const PosedShape pose{&shape, RigidTransform{Quat(), centre}};
    OverlapResult overlap;
    Overlap(index, cache, pose, {}, &overlap);
    ContactsResult contacts;
    Contacts(index, cache, pose, ContactsSettings{}, &contacts);
    SweepResult sweep;
    Sweep(index, cache, SweepInput{pose, Vec3(1, 0, 0), 0.01f}, SweepSettings{}, &sweep);
    ASSERT_TRUE(overlap.load_status.ok() && contacts.load_status.ok() && sweep.load_status.ok());
    const bool answers[3] = {overlap.touches_solid, contacts.buried, sweep.initial_overlap};
    for (int q = 0; q < 3; ++q) {
      if (answers[q] == in_solid) continue;
      if (++wrong[q] <= 3) {
        std::printf("query %d: (%.3f, %.3f, %.3f) oracle %s, answered %s\n", q, c.x, c.y, c.z,
                    in_solid ? "inside" : "outside", answers[q] ? "buried" : "not buried");
      }
    }
  }
  std::printf(
      "half height %.2f: %d poses clear of the surface: %d inside the solid, %d in open space in a "
      "solid voxel; wrong: overlap %d, contacts %d, sweep %d\n",
      half_height, poses, inside, open_in_solid_voxel, wrong[0], wrong[1], wrong[2]);
  EXPECT_EQ(wrong[0], 0);
  EXPECT_EQ(wrong[1], 0);
  EXPECT_EQ(wrong[2], 0);
  // Both sides are sampled, and so is the case the voxel alone gets wrong.
  EXPECT_GT(inside, 200);
  EXPECT_GT(poses - inside, 200);
  EXPECT_GT(open_in_solid_voxel, 10);
}

TEST(BuriedOracleTest, ShapesClearOfTheSurfaceAreBuriedExactlyWhenInsideTheSolid) {
  CheckBuriedAgainstOracle(MakeSphere(0.15f), 0, 4242);
}

TEST(BuriedOracleTest, UprightCapsulesClearOfTheSurfaceAreBuriedExactlyWhenInsideTheSolid) {
  CheckBuriedAgainstOracle(MakeCapsule(0.5f, 0.15f), 0.5f, 4243);
}

}  // namespace
}  // namespace voxcol
