// server/convert/convert_edit.h, the change feed: a stored entry clipped to a subscription's
// region, with the voxels of the clipped box taken from the entry's own arrays.
#include <gtest/gtest.h>

#include "server/convert/convert_edit.h"

namespace voxcol::server {
namespace {

// An entry with one change: the box (0,0,0)..(4,2,3) of chunk (0,0,0), voxel (x,y,z) holding
// material 100 + x + 10 * y + 20 * z (so each voxel is recognizable) and occupancy 255 - x.
ChangeEntry MakeEntry() {
  ChangeEntry entry;
  entry.version = 7;
  const IntBox box{{0, 0, 0}, {4, 2, 3}};
  entry.changes.push_back({ChunkKey{0, 0, 0}, box});
  VoxelArrays voxels{box, std::vector<uint8_t>(box.Volume()), std::vector<uint8_t>(box.Volume())};
  for (int y = 0; y < 2; ++y)
    for (int z = 0; z < 3; ++z)
      for (int x = 0; x < 4; ++x) {
        voxels.materials[VoxelArrayIndex(box, {x, y, z})] = uint8_t(100 + x + 10 * y + 20 * z);
        voxels.occupancies[VoxelArrayIndex(box, {x, y, z})] = uint8_t(255 - x);
      }
  entry.voxels.push_back(std::move(voxels));
  return entry;
}

TEST(ChangeEntryToProto, WholeBoxCarriesTheStoredVoxels) {
  ChangeEntry entry = MakeEntry();
  v1::SubscribeResponse out;
  ASSERT_TRUE(ToProto(entry, IntBox{{-8, -8, -8}, {8, 8, 8}}, true, &out));
  EXPECT_EQ(out.version(), 7u);
  ASSERT_EQ(out.changes_size(), 1);
  const std::string& materials = out.changes(0).voxels().materials();
  EXPECT_EQ(materials,
            std::string(entry.voxels[0].materials.begin(), entry.voxels[0].materials.end()));
}

TEST(ChangeEntryToProto, ClippedBoxCarriesExactlyItsVoxels) {
  ChangeEntry entry = MakeEntry();
  const IntBox region{{1, 1, 1}, {3, 5, 5}};  // clips to (1,1,1)..(3,2,3)
  v1::SubscribeResponse out;
  ASSERT_TRUE(ToProto(entry, region, true, &out));
  ASSERT_EQ(out.changes_size(), 1);
  const v1::ChunkChange& change = out.changes(0);
  EXPECT_EQ(change.changed_voxels().min().x(), 1);
  EXPECT_EQ(change.changed_voxels().max().x(), 3);
  EXPECT_EQ(change.changed_voxels().max().y(), 2);
  EXPECT_EQ(change.changed_voxels().max().z(), 3);
  const IntBox clipped{{1, 1, 1}, {3, 2, 3}};
  ASSERT_EQ(change.voxels().materials().size(), size_t(clipped.Volume()));
  for (int z = 1; z < 3; ++z)
    for (int x = 1; x < 3; ++x) {
      const int64_t i = VoxelArrayIndex(clipped, {x, 1, z});
      EXPECT_EQ(uint8_t(change.voxels().materials()[i]), 100 + x + 10 + 20 * z) << x << "," << z;
      EXPECT_EQ(uint8_t(change.voxels().occupancies()[i]), 255 - x) << x << "," << z;
    }
}

TEST(ChangeEntryToProto, NothingInTheRegionIsSkipped) {
  ChangeEntry entry = MakeEntry();
  v1::SubscribeResponse out;
  EXPECT_FALSE(ToProto(entry, IntBox{{4, 0, 0}, {8, 8, 8}}, true, &out));
}

}  // namespace
}  // namespace voxcol::server
