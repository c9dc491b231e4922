// The analytic world the tests of server/ query: rock fills every voxel below y = kGround (the
// smooth surface is the plane y = -8), and a lake of water fills kGround <= y < kLake where
// x >= kLakeX (its surface is the plane y = -4). 64^3 voxels of size 1, from -32 to 32 per axis.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "server/exec/query_ops.h"
#include "server/exec/service_limits.h"
#include "tests/core/test_worlds.h"

namespace voxcol::server::test_util {

constexpr float kGround = -8;  // world units: top of the rock
constexpr float kLake = -4;    // world units: water surface where x >= kLakeX
constexpr int kLakeX = 16;

// A fixture with the lake world and a query engine over it.
class LakeWorldTest : public ::testing::Test {
 protected:
  LakeWorldTest()
      : world_(testing::MakeFunctionWorld([](const Int3& v) {
          if (v.y < kGround) return Voxel{kMaterialRock, 255};
          if (v.x >= kLakeX && v.y < kLake) return Voxel{kMaterialWater, 255};
          return Voxel{};
        })),
        index_(*world_),
        cache_(*world_, size_t(16) << 20),
        engine_{index_, cache_} {}

  std::unique_ptr<World> world_;
  BroadphaseIndex index_;
  ChunkCollisionCache cache_;
  QueryEngine engine_;
  ServiceLimits limits_;
};

}  // namespace voxcol::server::test_util
