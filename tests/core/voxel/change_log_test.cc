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
  // The voxels of the changed box after the batch: the one voxel (9, 2, 3).
  ASSERT_EQ((*entries)[1]->voxels.size(), 1u);
  EXPECT_EQ((*entries)[1]->voxels[0].materials, std::vector<uint8_t>{kMaterialDirt});
  EXPECT_EQ((*entries)[1]->voxels[0].occupancies, std::vector<uint8_t>{255});
  EXPECT_EQ((*entries)[1]->bytes, 16u + 40u + 2u);
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

TEST(ChangeLog, ByteBudgetShrinksTheWindow) {
  auto world = testing::MakeEmptyWorld();
  // Each edit changes 8 whole chunks: 16 + 8 * (40 + 1024) bytes; two fit in 20,000, three not.
  ChangeLog log(0, {/*max_versions=*/100, /*max_chunks=*/1000, /*max_bytes=*/20000});
  world->AddObserver(&log);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        world
            ->Edit([&](ChunkEdit& e) {
              return FillRegion(
                  e, {{{0, 0, 0}, {16, 16, 16}}, uint8_t(kMaterialRock + i), EditMode::kSet}, {});
            })
            .ok());
  }
  EXPECT_EQ(log.oldest_resumable_version(), 2u);
  EXPECT_EQ(log.retained_bytes(), 2u * (16 + 8 * (40 + 1024)));
}

TEST(RetentionWindow, ReportsDroppedVersionsAndRestartsAfterAGap) {
  RetentionWindow window({/*max_versions=*/2, /*max_chunks=*/100, /*max_bytes=*/1000}, 10);
  EXPECT_TRUE(window.Append({11, 1, 100}).empty());
  EXPECT_TRUE(window.Append({12, 1, 100}).empty());
  EXPECT_EQ(window.Append({13, 1, 100}), std::vector<uint64_t>{11});
  EXPECT_EQ(window.base_version(), 11u);
  // One entry larger than the byte budget is still kept (the newest always is), alone.
  EXPECT_EQ(window.Append({14, 1, 5000}), (std::vector<uint64_t>{12, 13}));
  EXPECT_EQ(window.base_version(), 13u);
  // Version 20 after 14: the window restarts at 19.
  EXPECT_EQ(window.Append({20, 1, 1}), std::vector<uint64_t>{14});
  EXPECT_EQ(window.base_version(), 19u);
  EXPECT_EQ(window.newest_version(), 20u);
}

TEST(ChangeLog, RestoredEntriesAreServedAndNewEditsContinueThem) {
  auto world = testing::MakeEmptyWorld();
  world->RestoreVersion(3);
  std::vector<ChangeEntryPtr> restored;
  for (uint64_t v = 2; v <= 3; ++v) {
    auto entry = std::make_shared<ChangeEntry>();
    entry->version = v;
    restored.push_back(entry);
  }
  ChangeLog log(3, {}, restored);
  world->AddObserver(&log);
  EXPECT_EQ(log.oldest_resumable_version(), 1u);
  ASSERT_TRUE(SetVoxel(*world, {1, 1, 1}, kMaterialRock).ok());
  auto entries = log.Read(1, 10, absl::ZeroDuration());
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*entries)[i]->version, 2 + i);
  // Entries that do not end at the start version are not a window of this world: ignored.
  ChangeLog stale(5, {}, restored);
  EXPECT_EQ(stale.oldest_resumable_version(), 5u);
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

TEST(ChangeLog, ListenerHearsEachVersionAndTheClose) {
  auto world = testing::MakeEmptyWorld();
  ChangeLog log(0, {});
  std::vector<uint64_t> heard;
  log.SetListener([&](uint64_t version) { heard.push_back(version); });
  world->AddObserver(&log);
  ASSERT_TRUE(SetVoxel(*world, {1, 1, 1}, kMaterialRock).ok());
  ASSERT_TRUE(SetVoxel(*world, {2, 1, 1}, kMaterialRock).ok());
  log.Close();
  EXPECT_EQ(heard, (std::vector<uint64_t>{1, 2, 2}));
  EXPECT_TRUE(log.closed());
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
