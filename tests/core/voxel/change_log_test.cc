// The change log behind Subscribe: order, contents, retention window, concurrent readers, close.
#include "core/voxel/change_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/voxel/edit_shapes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

absl::StatusOr<EditResult> SetVoxel(World& world, Int3 v, uint8_t material) {
  return world.Edit([&](ChunkEdit& e) {
    e.Set(v, {material, 255});
    return absl::OkStatus();
  });
}

TEST(ChangeLog, RecordsEveryEditInVersionOrderWithItsChangesAndChunks) {
  auto world = testing::MakeEmptyWorld();
  ChangeLog log(world->version(), {});
  world->AddObserver(&log);
  ASSERT_TRUE(SetVoxel(*world, {1, 2, 3}, kMaterialRock).ok());
  ASSERT_TRUE(SetVoxel(*world, {9, 2, 3}, kMaterialDirt).ok());
  auto entries = log.Read(0, 10, absl::ZeroDuration());
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0]->version, 1u);
  EXPECT_EQ((*entries)[1]->version, 2u);
  ASSERT_EQ((*entries)[1]->changes.size(), 1u);
  EXPECT_EQ((*entries)[1]->changes[0].key, (ChunkKey{1, 0, 0}));
  EXPECT_EQ((*entries)[1]->changes[0].changed_voxels.min, (Int3{9, 2, 3}));
  EXPECT_EQ((*entries)[1]->chunks[0]->At(1, 2, 3), (Voxel{kMaterialDirt, 255}));
  auto tail = log.Read(1, 10, absl::ZeroDuration());
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0]->version, 2u);
  EXPECT_TRUE(log.Read(2, 10, absl::Milliseconds(1))->empty());  // up to date: times out empty
}

TEST(ChangeLog, KeepsTheLastVersionsAndRejectsOlderCursors) {
  auto world = testing::MakeEmptyWorld();
  world->RestoreVersion(100);
  ChangeLog log(world->version(), {/*max_versions=*/5, /*max_chunks=*/1000});
  world->AddObserver(&log);
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(SetVoxel(*world, {i, 0, 0}, kMaterialRock).ok());
  EXPECT_EQ(log.newest_version(), 112u);
  EXPECT_EQ(log.oldest_resumable_version(), 107u);
  EXPECT_EQ(log.Read(106, 10, absl::ZeroDuration()).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(log.Read(106, 10, absl::ZeroDuration()).status().message().find("ReadVoxels"),
            std::string::npos);
  auto window = log.Read(107, 10, absl::ZeroDuration());
  ASSERT_TRUE(window.ok());
  ASSERT_EQ(window->size(), 5u);
  EXPECT_EQ(window->front()->version, 108u);
  EXPECT_EQ(log.Read(113, 10, absl::ZeroDuration()).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(ChangeLog, ChunkBudgetShrinksTheWindow) {
  auto world = testing::MakeEmptyWorld();
  ChangeLog log(0, {/*max_versions=*/100, /*max_chunks=*/8});
  world->AddObserver(&log);
  // Each edit changes 8 chunks (a 16^3 box), so only the newest fits.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        world
            ->Edit([&](ChunkEdit& e) {
              return FillRegion(
                  e, {{{0, 0, 0}, {16, 16, 16}}, uint8_t(kMaterialRock + i), EditMode::kSet}, {});
            })
            .ok());
  }
  EXPECT_EQ(log.oldest_resumable_version(), 2u);
}

// A reader following the log while two writers edit sees each version exactly once, in order.
TEST(ChangeLog, ConcurrentReaderSeesEachVersionOnceInOrder) {
  auto world = testing::MakeEmptyWorld();
  ChangeLog log(0, {/*max_versions=*/100000, /*max_chunks=*/1000000});
  world->AddObserver(&log);
  constexpr int kPerWriter = 300;
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i)
        ASSERT_TRUE(SetVoxel(*world, {i % 30, w, 0}, uint8_t(2 + i % 50)).ok());
    });
  }
  uint64_t cursor = 0;
  while (cursor < 2 * kPerWriter) {
    auto entries = log.Read(cursor, 7, absl::Milliseconds(100));
    ASSERT_TRUE(entries.ok()) << entries.status();
    for (const ChangeEntryPtr& e : *entries) {
      ASSERT_EQ(e->version, cursor + 1);
      cursor = e->version;
    }
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(cursor, world->version());
}

TEST(ChangeLog, CloseWakesWaitingReaders) {
  ChangeLog log(0, {});
  std::atomic<bool> done{false};
  absl::Status status;
  std::thread reader([&] {
    status = log.Read(0, 1, absl::Seconds(30)).status();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  log.Close();
  reader.join();
  EXPECT_TRUE(done);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace voxcol
