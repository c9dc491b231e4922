#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Sum of occupancy over the world box around a ball, in world units cubed.
double FilledVolume(const World& world, const Vec3& center, float radius, uint8_t material) {
  float h = world.voxel_size();
  Int3 lo = world.VoxelAt(center - Vec3(radius + 2 * h, radius + 2 * h, radius + 2 * h));
  Int3 hi = world.VoxelAt(center + Vec3(radius + 2 * h, radius + 2 * h, radius + 2 * h));
  double sum = 0;
  for (int y = lo.y; y <= hi.y; ++y)
    for (int z = lo.z; z <= hi.z; ++z)
      for (int x = lo.x; x <= hi.x; ++x) {
        Voxel v = world.GetVoxel({x, y, z});
        if (v.material == material) sum += v.occupancy / 255.0;
      }
  return sum * double(h) * h * h;
}

struct BallCase {
  float radius;
  float voxel_size;
};

class FillBallVolume : public ::testing::TestWithParam<BallCase> {};

// The occupancy sum must match 4/3 pi r^3 within 2% plus a boundary term: each boundary voxel
// (those within half a diagonal of the sphere, about 4 pi r^2 * sqrt(3) / h^2 of them) may be off
// by half an occupancy step (1/510) from rounding to 8 bits.
TEST_P(FillBallVolume, OccupancySumMatchesAnalyticVolume) {
  const BallCase c = GetParam();
  auto world = testing::MakeEmptyWorld({96, 96, 96}, c.voxel_size);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> jitter(-0.5f, 0.5f);
  for (int trial = 0; trial < 4; ++trial) {
    Vec3 center = Vec3(jitter(rng), jitter(rng), jitter(rng)) * (3.0f * c.voxel_size);
    auto result = world->Edit([&](ChunkEdit& e) {
      return FillBall(e, {center, c.radius, kMaterialRock, EditMode::kAdd}, EditLimits{});
    });
    ASSERT_TRUE(result.ok()) << result.status();
    double analytic = 4.0 / 3.0 * kPi * std::pow(double(c.radius), 3);
    double h = c.voxel_size;
    double boundary_voxels = 4 * kPi * c.radius * c.radius * std::sqrt(3.0) / (h * h);
    double tolerance = 0.02 * analytic + boundary_voxels * (h * h * h) / 510.0;
    double measured = FilledVolume(*world, center, c.radius, kMaterialRock);
    EXPECT_NEAR(measured, analytic, tolerance) << "radius " << c.radius << " centre " << center.x;

    // Voxels well inside are exactly full, well outside exactly empty.
    float margin = 0.8661f * c.voxel_size;
    Int3 lo = world->VoxelAt(center - Vec3(c.radius + 3 * h, c.radius + 3 * h, c.radius + 3 * h));
    Int3 hi = world->VoxelAt(center + Vec3(c.radius + 3 * h, c.radius + 3 * h, c.radius + 3 * h));
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x; ++x) {
          float d = Length(world->VoxelCenter({x, y, z}) - center);
          Voxel v = world->GetVoxel({x, y, z});
          if (d < c.radius - margin) {
            ASSERT_EQ(v, (Voxel{kMaterialRock, 255})) << x << "," << y << "," << z;
          }
          if (d > c.radius + margin) {
            ASSERT_EQ(v, Voxel{}) << x << "," << y << "," << z;
          }
        }
    // Clear for the next trial.
    ASSERT_TRUE(world
                    ->Edit([&](ChunkEdit& e) {
                      return FillBall(
                          e, {center, c.radius + 2 * c.voxel_size, kMaterialAir, EditMode::kSet},
                          EditLimits{});
                    })
                    .ok());
    ASSERT_EQ(FilledVolume(*world, center, c.radius, kMaterialRock), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, FillBallVolume,
                         ::testing::Values(BallCase{2.0f, 1.0f}, BallCase{3.3f, 1.0f},
                                           BallCase{6.0f, 1.0f}, BallCase{11.5f, 1.0f},
                                           BallCase{20.0f, 1.0f}, BallCase{5.0f, 0.5f},
                                           BallCase{7.25f, 0.25f}));

TEST(FillBall, CarvingRemovesTheBallVolumeFromSolidRock) {
  auto world = testing::MakeFunctionWorld([](const Int3&) { return Voxel{kMaterialRock, 255}; });
  const float r = 7.0f;
  const Vec3 c{0.3f, -0.2f, 0.1f};
  double before = FilledVolume(*world, c, r, kMaterialRock);
  ASSERT_TRUE(world
                  ->Edit([&](ChunkEdit& e) {
                    return FillBall(e, {c, r, kMaterialAir, EditMode::kAdd}, EditLimits{});
                  })
                  .ok());
  double removed = before - FilledVolume(*world, c, r, kMaterialRock);
  double analytic = 4.0 / 3.0 * kPi * r * r * r;
  EXPECT_NEAR(removed, analytic, 0.02 * analytic);
  EXPECT_EQ(world->GetVoxel(world->VoxelAt(c)), Voxel{});
}

TEST(FillBall, RejectsBadInputNamingTheFieldAndChangesNothing) {
  auto world = testing::MakeEmptyWorld();
  EditLimits limits;
  limits.max_radius = 10;
  struct Bad {
    FillBallParams params;
    const char* field;
  } cases[] = {
      {{{NAN, 0, 0}, 2, kMaterialRock}, "center"}, {{{0, INFINITY, 0}, 2, kMaterialRock}, "center"},
      {{{100, 0, 0}, 2, kMaterialRock}, "center"}, {{{0, 0, 0}, 0, kMaterialRock}, "radius"},
      {{{0, 0, 0}, -1, kMaterialRock}, "radius"},  {{{0, 0, 0}, NAN, kMaterialRock}, "radius"},
      {{{0, 0, 0}, 11, kMaterialRock}, "radius"},
  };
  for (const Bad& bad : cases) {
    auto result = world->Edit([&](ChunkEdit& e) { return FillBall(e, bad.params, limits); });
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(bad.field), std::string::npos) << result.status();
  }
  EXPECT_EQ(world->version(), 0u);
}

TEST(FillBall, BallCrossingTheWorldBoundaryIsClipped) {
  auto world = testing::MakeEmptyWorld({32, 32, 32});
  auto result = world->Edit([&](ChunkEdit& e) {
    return FillBall(e, {{15.5f, 0, 0}, 4, kMaterialRock, EditMode::kAdd}, EditLimits{});
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(world->GetVoxel({15, 0, 0}), (Voxel{kMaterialRock, 255}));
  for (const ChunkChange& c : result->changes) EXPECT_TRUE(world->chunk_bounds().Contains(c.key));
}

TEST(CombineCoverage, ModesFollowTheirDefinitions) {
  Voxel half_dirt{kMaterialDirt, 128};
  EXPECT_EQ(CombineCoverage(half_dirt, 1.0f, kMaterialRock, EditMode::kAdd),
            (Voxel{kMaterialRock, 255}));
  EXPECT_EQ(CombineCoverage(half_dirt, 0.25f, kMaterialRock, EditMode::kAdd), half_dirt);
  EXPECT_EQ(CombineCoverage(half_dirt, 0.25f, kMaterialRock, EditMode::kSubtract),
            (Voxel{kMaterialDirt, 128}));
  EXPECT_EQ(CombineCoverage(half_dirt, 0.75f, kMaterialRock, EditMode::kSubtract),
            (Voxel{kMaterialDirt, 64}));
  EXPECT_EQ(CombineCoverage(half_dirt, 1.0f, kMaterialRock, EditMode::kSubtract), Voxel{});
  EXPECT_EQ(CombineCoverage(half_dirt, 1.0f, kMaterialAir, EditMode::kAdd), Voxel{});
  EXPECT_EQ(CombineCoverage(half_dirt, 0.2f, kMaterialSand, EditMode::kSet),
            (Voxel{kMaterialSand, 51}));
  EXPECT_EQ(CombineCoverage(half_dirt, 0.0f, kMaterialSand, EditMode::kSet), half_dirt);
}

}  // namespace
}  // namespace voxcol
