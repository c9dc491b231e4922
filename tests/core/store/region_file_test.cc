#include "core/store/region_file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/voxel/edit.h"
#include "core/voxel/edit_shapes.h"
#include "tests/core/test_worlds.h"

namespace voxcol::store {
namespace {

TEST(RegionFile, ExportThenImportIntoAnotherWorldCopiesEveryVoxel) {
  auto source = testing::MakeCaveWorld(11);
  auto target = testing::MakeEmptyWorld({128, 96, 128});
  IntBox box{{-13, -20, 5}, {19, 7, 30}};  // not chunk aligned, crosses the origin
  absl::StatusOr<Region> region = ReadRegion(*source, box);
  ASSERT_TRUE(region.ok()) << region.status();
  absl::StatusOr<Region> decoded = DecodeRegion(EncodeRegion(*region));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(target->Edit([&](ChunkEdit& e) { return WriteRegion(*decoded, e); }).ok());
  for (int y = box.min.y - 1; y <= box.max.y; ++y)
    for (int z = box.min.z - 1; z <= box.max.z; ++z)
      for (int x = box.min.x - 1; x <= box.max.x; ++x) {
        Voxel expected = box.Contains({x, y, z}) ? source->GetVoxel({x, y, z}) : Voxel{};
        ASSERT_EQ(target->GetVoxel({x, y, z}), expected) << x << "," << y << "," << z;
      }
}

// A writer flips a 24^3 box (27 chunks) between two uniform materials; every export must see one
// of them everywhere, never a mix, and the version it reports must match the material.
TEST(RegionFile, ExportsAreSnapshotsWhileEditsPublish) {
  auto world = testing::MakeEmptyWorld();
  IntBox box{{-12, -12, -12}, {12, 12, 12}};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop.load() && i < 2000; ++i) {
      uint8_t m = (i % 2 == 0) ? kMaterialRock : kMaterialDirt;  // version i+1 has material m
      ASSERT_TRUE(
          world->Edit([&](ChunkEdit& e) {
                 return FillRegion(e, {box, m, EditMode::kSet}, {});
               })
              .ok());
    }
  });
  for (int i = 0; i < 200; ++i) {
    uint64_t version = 0;
    absl::StatusOr<Region> read = ReadRegion(*world, box, &version);
    ASSERT_TRUE(read.ok());
    uint8_t expected =
        version == 0 ? kMaterialAir : (version % 2 == 1 ? kMaterialRock : kMaterialDirt);
    for (uint8_t m : read->materials) ASSERT_EQ(m, expected) << "version " << version;
  }
  stop = true;
  writer.join();
}

TEST(RegionFile, PackedLayoutIsHeaderThenMaterialsThenOccupancyXFastestThenZThenY) {
  Region region{{{-1, 2, 3}, {1, 4, 4}}, {}, {}};  // 2 x 2 x 1
  for (int i = 0; i < 4; ++i) {
    region.materials.push_back(uint8_t(10 + i));
    region.occupancy.push_back(uint8_t(200 + i));
  }
  std::string packed = EncodeRegion(region);
  ASSERT_EQ(packed.size(), 32u + 8u);
  EXPECT_EQ(packed.substr(0, 4), "VXRG");
  EXPECT_EQ(uint8_t(packed[8]), 0xFF);       // min.x = -1, little endian
  EXPECT_EQ(packed[20], 2);                  // size.x
  EXPECT_EQ(region.IndexOf({0, 2, 3}), 1);   // X fastest
  EXPECT_EQ(region.IndexOf({-1, 3, 3}), 2);  // then Z (size 1), then Y
  EXPECT_EQ(uint8_t(packed[32 + 1]), 11);
  EXPECT_EQ(uint8_t(packed[36 + 2]), 202);
}

TEST(RegionFile, MalformedOrOutOfWorldRegionsAreInvalidArgument) {
  auto world = testing::MakeEmptyWorld({64, 64, 64});
  Region region{{{0, 0, 0}, {2, 2, 2}}, std::vector<uint8_t>(8, 2), std::vector<uint8_t>(8, 255)};
  std::string packed = EncodeRegion(region);
  EXPECT_EQ(DecodeRegion(packed.substr(0, 39)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeRegion("XXXX" + packed.substr(4)).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::string huge = packed;
  huge[20] = huge[21] = huge[22] = char(0x7F);
  EXPECT_EQ(DecodeRegion(huge).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadRegion(*world, {{0, 0, 0}, {40, 2, 2}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadRegion(*world, {{0, 0, 0}, {0, 2, 2}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadRegion(*world, {{-32, -32, -32}, {32, 32, 32}}).status().code(),
            absl::StatusCode::kOk);
  auto big = testing::MakeEmptyWorld({256, 256, 256});
  EXPECT_EQ(ReadRegion(*big, {{-128, -128, -128}, {0, 0, 0}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace voxcol::store
