// FillBlock, FillCylinder, FillWedge vs their analytic volumes and point-membership oracles;
// FillRegion, ReplaceMaterial and Clear vs voxel-by-voxel expectations.
#include "core/voxel/edit_shapes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr double kPi = 3.14159265358979323846;

// An oriented shape as the tests see it: independent of the SDFs in edit_shapes.cc.
struct ShapeCase {
  const char* name;
  Vec3 size;  // block/wedge edges; cylinder: (2r, height, 2r)
};

// Point membership in the local frame, written from the shape definitions (not the SDFs).
bool InsideBlock(const Vec3& p, const Vec3& s) {
  return std::fabs(p.x) <= s.x / 2 && std::fabs(p.y) <= s.y / 2 && std::fabs(p.z) <= s.z / 2;
}
bool InsideCylinder(const Vec3& p, const Vec3& s) {
  return p.x * p.x + p.z * p.z <= (s.x / 2) * (s.x / 2) && std::fabs(p.y) <= s.y / 2;
}
// Roblox wedge: inside the box and on or below the plane through the bottom-front edge
// (y=-sy/2, z=-sz/2) and the top-back edge (y=+sy/2, z=+sz/2).
bool InsideWedge(const Vec3& p, const Vec3& s) {
  return InsideBlock(p, s) && (p.y + s.y / 2) / s.y <= (p.z + s.z / 2) / s.z;
}

enum class Kind { kBlock, kCylinder, kWedge };

double SurfaceArea(Kind kind, const Vec3& s);

double AnalyticVolume(Kind kind, const Vec3& s) {
  switch (kind) {
    case Kind::kBlock:
      return double(s.x) * s.y * s.z;
    case Kind::kCylinder:
      return kPi * (s.x / 2.0) * (s.x / 2.0) * s.y;
    case Kind::kWedge:
      return double(s.x) * s.y * s.z / 2.0;
  }
  return 0;
}

// Area of the planar faces (all faces but the cylinder's side).
double PlanarArea(Kind kind, const Vec3& s) {
  if (kind == Kind::kCylinder) return 2 * kPi * (s.x / 2.0) * (s.x / 2.0);
  return SurfaceArea(kind, s);
}

double SurfaceArea(Kind kind, const Vec3& s) {
  switch (kind) {
    case Kind::kBlock:
      return 2.0 * (double(s.x) * s.y + double(s.y) * s.z + double(s.x) * s.z);
    case Kind::kCylinder:
      return 2 * kPi * (s.x / 2.0) * (s.x / 2.0) + kPi * s.x * s.y;
    case Kind::kWedge:
      return double(s.y) * s.z + double(s.x) * s.y + double(s.x) * s.z + s.x * std::hypot(s.y, s.z);
  }
  return 0;
}

bool Inside(Kind kind, const Vec3& local, const Vec3& s) {
  switch (kind) {
    case Kind::kBlock:
      return InsideBlock(local, s);
    case Kind::kCylinder:
      return InsideCylinder(local, s);
    case Kind::kWedge:
      return InsideWedge(local, s);
  }
  return false;
}

absl::Status Fill(ChunkEdit& e, Kind kind, const Vec3& center, const Quat& rotation, const Vec3& s,
                  uint8_t material, EditMode mode) {
  EditLimits limits;
  switch (kind) {
    case Kind::kBlock:
      return FillBlock(e, {center, rotation, s, material, mode}, limits);
    case Kind::kCylinder:
      return FillCylinder(e, {center, rotation, s.y, s.x / 2, material, mode}, limits);
    case Kind::kWedge:
      return FillWedge(e, {center, rotation, s, material, mode}, limits);
  }
  return absl::InternalError("kind");
}

// A voxel cube lies inside a convex shape iff its 8 corners do.
bool CubeInside(Kind kind, const Quat& inv, const Vec3& center, const Vec3& lo, float h,
                const Vec3& s) {
  for (int c = 0; c < 8; ++c) {
    Vec3 corner = lo + Vec3(c & 1, (c >> 1) & 1, (c >> 2) & 1) * h;
    if (!Inside(kind, inv.Rotate(corner - center), s)) return false;
  }
  return true;
}

struct OrientedCase {
  Kind kind;
  Vec3 size;
  float voxel_size;
};

class OrientedShapeVolume : public ::testing::TestWithParam<OrientedCase> {};

// The occupancy sum must match the analytic volume within 2% plus a boundary term of two parts:
// - rounding: each boundary voxel (about area * sqrt(3) / h^2 of them: those within half a
//   diagonal of the surface) may be off by half an occupancy step (1/510 of a voxel);
// - sampling of planar faces: coverage counts the points of one global lattice of spacing
//   h/N (N = kCoverageSamples) that fall inside. Over a planar face whose normal is a lattice
//   direction (axis-aligned, or 45 degrees like a cube-shaped wedge's slope) the lattice planes
//   parallel to the face are at most h/N apart, so the count can misplace the face by up to
//   h/(2N) along its normal: at most planar_area * h / (2N) of volume. For generic normals the
//   errors cancel along the face; on curved faces (ball, cylinder side) they cancel too.
// Voxels whose cube is entirely inside the shape must be exactly full; voxels whose cube lies
// entirely outside the shape's bounding box (after rotation, a sphere of the half-diagonal) empty.
TEST_P(OrientedShapeVolume, OccupancySumMatchesAnalyticVolumeAndCoreIsFull) {
  const OrientedCase c = GetParam();
  const float h = c.voxel_size;
  auto world = testing::MakeEmptyWorld({96, 96, 96}, h);
  std::mt19937 rng(4321 + int(c.kind) * 7 + int(c.size.x * 10));
  std::uniform_real_distribution<float> jitter(-0.5f, 0.5f), angle(0.0f, 6.2831853f);
  const Quat fixed[] = {Quat{}, Quat::FromAxisAngle({0, 1, 0}, 0.5235988f),
                        Quat::FromAxisAngle({1, 0.3f, -0.6f}, 1.1f)};
  for (int trial = 0; trial < 5; ++trial) {
    Quat rotation = trial < 3 ? fixed[trial]
                              : Quat::FromAxisAngle({jitter(rng), jitter(rng), jitter(rng) + 0.01f},
                                                    angle(rng));
    Vec3 center = Vec3(jitter(rng), jitter(rng), jitter(rng)) * (3.0f * h);
    ASSERT_TRUE(world
                    ->Edit([&](ChunkEdit& e) {
                      return Fill(e, c.kind, center, rotation, c.size, kMaterialRock,
                                  EditMode::kAdd);
                    })
                    .ok());

    float reach = 0.5f * Length(c.size) + 2 * h;
    Int3 lo = world->VoxelAt(center - Vec3(reach, reach, reach));
    Int3 hi = world->VoxelAt(center + Vec3(reach, reach, reach));
    Quat inv = rotation.Conjugate();
    double sum = 0;
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x; ++x) {
          Voxel v = world->GetVoxel({x, y, z});
          if (v.material == kMaterialRock) sum += v.occupancy / 255.0;
          Vec3 corner(x * h, y * h, z * h);
          if (CubeInside(c.kind, inv, center, corner, h, c.size)) {
            ASSERT_EQ(v, (Voxel{kMaterialRock, 255}))
                << "inside voxel " << x << "," << y << "," << z;
          }
          // Outside the circumscribed sphere grown by a voxel diagonal: certainly outside.
          if (Length(world->VoxelCenter({x, y, z}) - center) >
              0.5f * Length(c.size) + 0.8661f * h) {
            ASSERT_EQ(v, Voxel{}) << "outside voxel " << x << "," << y << "," << z;
          }
        }
    double measured = sum * h * h * h;
    double analytic = AnalyticVolume(c.kind, c.size);
    double boundary_voxels = SurfaceArea(c.kind, c.size) * std::sqrt(3.0) / (h * h);
    double sampling = PlanarArea(c.kind, c.size) * h / (2.0 * kCoverageSamples);
    double tolerance = 0.02 * analytic + boundary_voxels * (h * h * h) / 510.0 + sampling;
    EXPECT_NEAR(measured, analytic, tolerance)
        << "trial " << trial << " size " << c.size.x << "," << c.size.y << "," << c.size.z;
    ASSERT_TRUE(world
                    ->Edit([&](ChunkEdit& e) {
                      return Clear(e, {world->voxel_bounds().Intersect({lo, hi + Int3{1, 1, 1}})},
                                   EditLimits{});
                    })
                    .ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, OrientedShapeVolume,
                         ::testing::Values(OrientedCase{Kind::kBlock, {4, 4, 4}, 1.0f},
                                           OrientedCase{Kind::kBlock, {6.5f, 3.2f, 9.7f}, 1.0f},
                                           OrientedCase{Kind::kBlock, {20, 12.4f, 16}, 1.0f},
                                           OrientedCase{Kind::kBlock, {5, 7.5f, 3}, 0.5f},
                                           OrientedCase{Kind::kCylinder, {6, 8, 6}, 1.0f},
                                           OrientedCase{
                                               Kind::kCylinder, {11.4f, 5.3f, 11.4f}, 1.0f},
                                           OrientedCase{Kind::kCylinder, {24, 30, 24}, 1.0f},
                                           OrientedCase{Kind::kCylinder, {5, 3.5f, 5}, 0.25f},
                                           OrientedCase{Kind::kWedge, {6, 6, 6}, 1.0f},
                                           OrientedCase{Kind::kWedge, {8.3f, 5.1f, 12.6f}, 1.0f},
                                           OrientedCase{Kind::kWedge, {24, 16, 20}, 1.0f},
                                           OrientedCase{Kind::kWedge, {4, 6, 5}, 0.5f}));

// Signed-distance functions must never overestimate the distance to the surface: compare with a
// brute-force distance to a dense sampling of the surface, which can only overestimate the truth.
TEST(ShapeSdf, NeverOverestimatesTheDistanceToTheSurface) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-1, 1);
  const Vec3 s{4.0f, 2.5f, 6.0f};
  // Surface samples: points of a fine grid whose membership differs from a neighbour's.
  std::vector<Vec3> block_surface, wedge_surface, cylinder_surface;
  const float step = 0.05f;
  for (float y = -3.5f; y <= 3.5f; y += step)
    for (float z = -3.5f; z <= 3.5f; z += step)
      for (float x = -2.5f; x <= 2.5f; x += step) {
        Vec3 p{x, y, z};
        Vec3 q{x + step, y, z}, r{x, y + step, z}, t{x, y, z + step};
        auto edge = [&](auto inside) {
          return inside(p) != inside(q) || inside(p) != inside(r) || inside(p) != inside(t);
        };
        if (edge([&](const Vec3& v) { return InsideBlock(v, s); })) block_surface.push_back(p);
        if (edge([&](const Vec3& v) { return InsideWedge(v, s); })) wedge_surface.push_back(p);
        if (edge([&](const Vec3& v) { return InsideCylinder(v, {4, 2.5f, 4}); }))
          cylinder_surface.push_back(p);
      }
  auto nearest = [](const std::vector<Vec3>& surface, const Vec3& p) {
    float best = 1e9f;
    for (const Vec3& q : surface) best = std::min(best, Length(q - p));
    return best;
  };
  // Grid points are within step*sqrt(3) of the true surface.
  const float slack = step * 1.7321f + 1e-4f;
  for (int i = 0; i < 300; ++i) {
    Vec3 p{u(rng) * 3.0f, u(rng) * 2.5f, u(rng) * 3.5f};
    EXPECT_LE(std::fabs(BlockSdf(p, s)), nearest(block_surface, p) + slack)
        << p.x << "," << p.y << "," << p.z;
    EXPECT_LE(std::fabs(WedgeSdf(p, s)), nearest(wedge_surface, p) + slack)
        << p.x << "," << p.y << "," << p.z;
    EXPECT_LE(std::fabs(CylinderSdf(p, 2.5f, 2.0f)), nearest(cylinder_surface, p) + slack);
    EXPECT_EQ(BlockSdf(p, s) < 0, InsideBlock(p, s));
    EXPECT_EQ(WedgeSdf(p, s) < 0, InsideWedge(p, s));
  }
}

TEST(FillWedge, SlopeFacesLocalMinusZAndUp) {
  auto world = testing::MakeEmptyWorld();
  // Unrotated 8x8x8 wedge centred at (0.0, 0.0, 0.0): the back (+Z) top is full, the front (-Z)
  // top is empty, the front bottom is full.
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return FillWedge(e,
                                     {{0, 0, 0}, Quat{}, {8, 8, 8}, kMaterialRock, EditMode::kAdd},
                                     EditLimits{});
                  })
                  .ok());
  EXPECT_EQ(world->GetVoxel({0, 1, 3}), (Voxel{kMaterialRock, 255}));  // y in [1,2], z in [3,4]
  EXPECT_EQ(world->GetVoxel({0, 3, -4}), Voxel{});
  EXPECT_EQ(world->GetVoxel({0, -4, -4}).material, kMaterialRock);
  EXPECT_EQ(world->GetVoxel({0, -4, 3}), (Voxel{kMaterialRock, 255}));
}

TEST(FillCylinder, AxisIsTheRotatedLocalY) {
  auto world = testing::MakeEmptyWorld();
  // Rotated 90 degrees about Z, the axis lies along world X: long in X, narrow in Y.
  Quat r = Quat::FromAxisAngle({0, 0, 1}, 1.5707963f);
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return FillCylinder(
                        e, {{0.5f, 0.5f, 0.5f}, r, 16, 2, kMaterialDirt, EditMode::kAdd},
                        EditLimits{});
                  })
                  .ok());
  EXPECT_EQ(world->GetVoxel({7, 0, 0}), (Voxel{kMaterialDirt, 255}));
  EXPECT_EQ(world->GetVoxel({0, 5, 0}), Voxel{});
}

TEST(OrientedShapes, RejectBadInputNamingTheFieldAndChangeNothing) {
  auto world = testing::MakeEmptyWorld();
  EditLimits limits;
  struct Bad {
    std::function<absl::Status(ChunkEdit&)> edit;
    const char* field;
  } cases[] = {
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{NAN, 0, 0}, Quat{}, {1, 1, 1}}, limits);
       },
       "center"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 99}, Quat{}, {1, 1, 1}}, limits);
       },
       "center"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 0}, Quat{0, 0, 0, 0}, {1, 1, 1}}, limits);
       },
       "rotation"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 0}, Quat{1, 1, 0, 0}, {1, 1, 1}}, limits);
       },
       "rotation"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 0}, Quat{NAN, 0, 0, 0}, {1, 1, 1}}, limits);
       },
       "rotation"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 0}, Quat{}, {1, 0, 1}}, limits);
       },
       "size.y"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 0}, Quat{}, {1, 1, INFINITY}}, limits);
       },
       "size.z"},
      {[&](ChunkEdit& e) {
         return FillBlock(e, {{0, 0, 0}, Quat{}, {129, 1, 1}}, limits);
       },
       "size.x"},
      {[&](ChunkEdit& e) {
         return FillWedge(e, {{0, 0, 0}, Quat{}, {-1, 1, 1}}, limits);
       },
       "size.x"},
      {[&](ChunkEdit& e) {
         return FillCylinder(e, {{0, 0, 0}, Quat{}, 0, 1}, limits);
       },
       "height"},
      {[&](ChunkEdit& e) {
         return FillCylinder(e, {{0, 0, 0}, Quat{}, 2, 65}, limits);
       },
       "radius"},
      {[&](ChunkEdit& e) {
         return FillRegion(e, {{{0, 0, 0}, {0, 4, 4}}}, limits);
       },
       "region"},
      {[&](ChunkEdit& e) {
         return FillRegion(e, {{{0, 0, 0}, {40, 4, 4}}}, limits);
       },
       "region"},
      {[&](ChunkEdit& e) {
         return Clear(e, {{{-33, 0, 0}, {4, 4, 4}}}, limits);
       },
       "region"},
      {[&](ChunkEdit& e) {
         return ReplaceMaterial(e, {{{5, 0, 0}, {4, 4, 4}}}, limits);
       },
       "region"},
  };
  for (const Bad& bad : cases) {
    auto result = world->Edit(bad.edit);
    ASSERT_FALSE(result.ok()) << bad.field;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(result.status().message().rfind(bad.field, 0), 0u) << result.status();
  }
  EditLimits small;
  small.max_region_voxels = 1000;
  auto too_big = world->Edit([&](ChunkEdit& e) {
    return Clear(e, {{{0, 0, 0}, {10, 10, 11}}}, small);
  });
  EXPECT_NE(too_big.status().message().find("more than the configured maximum 1000"),
            std::string::npos);
  EXPECT_EQ(world->version(), 0u);
}

TEST(FillRegion, FillsExactlyTheBoxInEveryMode) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    return v.y < 0 ? Voxel{kMaterialDirt, 100} : Voxel{};
  });
  IntBox box{{-3, -2, 5}, {6, 3, 9}};
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return FillRegion(e, {box, kMaterialRock, EditMode::kAdd}, {});
                  })
                  .ok());
  for (int y = -5; y < 6; ++y)
    for (int z = 2; z < 12; ++z)
      for (int x = -6; x < 9; ++x) {
        Voxel expected = y < 0 ? Voxel{kMaterialDirt, 100} : Voxel{};
        if (box.Contains({x, y, z})) expected = {kMaterialRock, 255};
        ASSERT_EQ(world->GetVoxel({x, y, z}), expected) << x << "," << y << "," << z;
      }
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return FillRegion(e, {box, kMaterialRock, EditMode::kSubtract}, {});
                  })
                  .ok());
  EXPECT_EQ(world->GetVoxel({0, -1, 6}), Voxel{});
  EXPECT_EQ(world->GetVoxel({0, -3, 6}), (Voxel{kMaterialDirt, 100}));
}

TEST(ReplaceMaterial, ReplacesOnlyTheSourceInsideTheRegion) {
  auto world = testing::MakeFunctionWorld([](const Int3& v) {
    if (v.x < 0) return Voxel{kMaterialDirt, 90};
    return v.x < 4 ? Voxel{kMaterialSand, 255} : Voxel{};
  });
  IntBox box{{-4, 0, 0}, {8, 8, 8}};
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return ReplaceMaterial(e, {box, kMaterialDirt, kMaterialGrass}, {});
                  })
                  .ok());
  EXPECT_EQ(world->GetVoxel({-1, 1, 1}), (Voxel{kMaterialGrass, 90}));  // occupancy kept
  EXPECT_EQ(world->GetVoxel({-5, 1, 1}), (Voxel{kMaterialDirt, 90}));   // outside the region
  EXPECT_EQ(world->GetVoxel({1, 1, 1}), (Voxel{kMaterialSand, 255}));   // not the source
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return ReplaceMaterial(e, {box, kMaterialAir, kMaterialWater}, {});
                  })
                  .ok());
  EXPECT_EQ(world->GetVoxel({5, 1, 1}), (Voxel{kMaterialWater, 255}));  // air fills
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return ReplaceMaterial(e, {box, kMaterialSand, kMaterialAir}, {});
                  })
                  .ok());
  EXPECT_EQ(world->GetVoxel({1, 1, 1}), Voxel{});  // target air empties
}

TEST(Clear, EmptiesTheRegionOnly) {
  auto world = testing::MakeFunctionWorld([](const Int3&) { return Voxel{kMaterialRock, 255}; });
  IntBox box{{-9, -1, 3}, {2, 7, 4}};
  auto result = world->Edit([&](ChunkEdit& e) { return Clear(e, {box}, {}); });
  ASSERT_TRUE(result.ok());
  for (int y = -3; y < 9; ++y)
    for (int z = 1; z < 6; ++z)
      for (int x = -11; x < 4; ++x)
        ASSERT_EQ(world->GetVoxel({x, y, z}),
                  (box.Contains({x, y, z}) ? Voxel{} : Voxel{kMaterialRock, 255}));
  int64_t changed = 0;
  for (const ChunkChange& c : result->changes) changed += c.changed_voxels.Volume();
  EXPECT_EQ(changed, box.Volume());  // the change boxes tile the cleared box exactly
}

}  // namespace
}  // namespace voxcol
