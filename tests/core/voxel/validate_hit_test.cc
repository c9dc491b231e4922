// ValidateHit's verdicts (core/query/validate_hit.h) against an analytic oracle: a rock ball in an
// empty world, whose smooth surface lies within half a voxel of the sphere, and the exact
// ray-sphere intersection.
#include "core/query/validate_hit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr float kRadius = 6;
const Vec3 kCenter{0.5f, 0.5f, 0.5f};

struct BallScene {
  std::unique_ptr<World> world = testing::MakeEmptyWorld();
  std::unique_ptr<BroadphaseIndex> index = std::make_unique<BroadphaseIndex>(*world);
  std::unique_ptr<ChunkCollisionCache> cache =
      std::make_unique<ChunkCollisionCache>(*world, size_t(64) << 20);
  BallScene() {
    world->AddObserver(index.get());
    const FillBallParams ball{kCenter, kRadius, kMaterialRock, EditMode::kAdd};
    EXPECT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
  }
  HitJudgement Judge(HitClaim claim) {
    EXPECT_TRUE(ValidateHitClaim(*world, &claim, QueryLimits{}).ok());
    return JudgeHit(*index, *cache, claim);
  }
};

// Shots along +x at height `h` above the ball's centre line: the sphere is entered at
// x = c.x - sqrt(r^2 - h^2).
float Entry(float h) { return kCenter.x - std::sqrt(kRadius * kRadius - h * h); }

TEST(ValidateHit, VerdictsAgreeWithTheRaySphereOracle) {
  BallScene s;
  const Vec3 origin{-25, kCenter.y + 2, kCenter.z};
  const float entry = Entry(2);
  // A target behind the ball: blocked where the ray enters the sphere.
  HitJudgement j = s.Judge({origin, {1, 0, 0}, false, {25, origin.y, origin.z}, 0.1f});
  EXPECT_EQ(j.verdict, HitVerdict::kBlockedByTerrain);
  ASSERT_TRUE(j.hit.hit);
  EXPECT_NEAR(j.hit.position.x, entry, 0.5f);
  EXPECT_NEAR(j.discrepancy, 50.0f - j.hit.distance, 1e-4f);
  EXPECT_NEAR(j.claim_distance, 50.0f, 1e-4f);
  // A target in front of the ball: confirmed.
  j = s.Judge({origin, {1, 0, 0}, false, {entry - 3, origin.y, origin.z}, 0.1f});
  EXPECT_EQ(j.verdict, HitVerdict::kConfirmed);
  // A claimed hit on the sphere: confirmed within half a voxel.
  j = s.Judge({origin, {1, 0, 0}, true, {entry, origin.y, origin.z}, 0.6f});
  EXPECT_EQ(j.verdict, HitVerdict::kConfirmed);
  EXPECT_LE(j.discrepancy, 0.6f);
  // A claimed hit deep inside the ball: the surface blocks it first.
  j = s.Judge({origin, {1, 0, 0}, true, {entry + 4, origin.y, origin.z}, 0.6f});
  EXPECT_EQ(j.verdict, HitVerdict::kBlockedByTerrain);
  EXPECT_NEAR(j.discrepancy, 4.0f, 0.5f);
  // A claimed hit in the air beside the ball (the shot passes above it): nothing there.
  const Vec3 high{-25, kCenter.y + kRadius + 3, kCenter.z};
  j = s.Judge({high, {1, 0, 0}, true, {kCenter.x, high.y, high.z}, 0.6f});
  EXPECT_EQ(j.verdict, HitVerdict::kNoTerrainAtClaim);
  EXPECT_FALSE(j.hit.hit);
  // A claimed hit off the ray: the server's hit is far from it.
  j = s.Judge({origin, {1, 0, 0}, true, {entry, origin.y + 3, origin.z}, 0.6f});
  EXPECT_EQ(j.verdict, HitVerdict::kNoTerrainAtClaim);
  EXPECT_NEAR(j.discrepancy, 3.0f, 0.6f);
}

TEST(ValidateHit, BadClaimsNameTheirField) {
  BallScene s;
  HitClaim claim{{-25, 0, 0}, {1, 0, 0}, true, {0, 0, 0}, -1};
  absl::Status status = ValidateHitClaim(*s.world, &claim, QueryLimits{});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().rfind("tolerance", 0), 0u) << status;
  claim = {{-25, 0, 0}, {1, 0, 0}, false, {NAN, 0, 0}, 0};
  status = ValidateHitClaim(*s.world, &claim, QueryLimits{});
  EXPECT_EQ(status.message().rfind("target_point", 0), 0u) << status;
  claim = {{-25, 0, 0}, {0, 0, 0}, true, {0, 0, 0}, 0};
  status = ValidateHitClaim(*s.world, &claim, QueryLimits{});
  EXPECT_EQ(status.message().rfind("direction", 0), 0u) << status;
  QueryLimits short_rays;
  short_rays.max_ray_distance = 10;
  claim = {{-25, 0, 0}, {1, 0, 0}, true, {0, 0, 0}, 0};
  status = ValidateHitClaim(*s.world, &claim, short_rays);
  EXPECT_EQ(status.message().rfind("claimed_hit", 0), 0u) << status;
}

}  // namespace
}  // namespace voxcol
