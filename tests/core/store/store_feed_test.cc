// The durable change feed: entries written with their edits, trimmed by the retention window in
// later writes, and reloaded (exactly the window) when the store is reopened.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "core/store/feed_codec.h"
#include "core/store/keys.h"
#include "core/store/store.h"
#include "core/voxel/edit_shapes.h"
#include "tests/core/store/store_test_util.h"

namespace voxcol {
namespace {

using testing::OpenStoredCaveWorld;
using testing::ScratchDir;

store::StoreOptions FeedOptions(size_t max_versions, size_t max_bytes = size_t(64) << 20) {
  store::StoreOptions options;
  options.sync = false;
  options.change_log = {max_versions, /*max_chunks=*/100000, max_bytes};
  return options;
}

// Edit i sets a 2x2x2 box of material 10 + i at x = 4 * i - 20 (inside one chunk): one changed
// chunk and 8 changed voxels per edit, 16 + 40 + 16 = 72 feed bytes.
absl::StatusOr<EditResult> EditNumber(World& world, int i) {
  return world.Edit([&](ChunkEdit& e) {
    const IntBox box{{4 * i - 20, 0, 0}, {4 * i - 18, 2, 2}};
    return FillRegion(e, {box, uint8_t(10 + i), EditMode::kSet}, {});
  });
}

// The feed versions stored in `dir`, read straight from RocksDB.
std::vector<uint64_t> StoredFeedVersions(const std::string& dir) {
  rocksdb::DB* raw = nullptr;
  EXPECT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::vector<uint64_t> versions;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("f"); it->Valid() && it->key().starts_with("f"); it->Next()) {
    uint64_t v = 0;
    EXPECT_TRUE(store::DecodeVersion(it->key().ToStringView().substr(1), &v));
    versions.push_back(v);
  }
  return versions;
}

TEST(StoreFeed, ReopenedStoreReturnsEveryEditsEntryWithItsVoxels) {
  ScratchDir dir;
  std::vector<EditResult> results;
  {
    auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(100));
    for (int i = 0; i < 5; ++i) results.push_back(*EditNumber(*w.world, i));
  }
  auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(100));
  std::vector<ChangeEntryPtr> feed = w.store->TakeFeedAtOpen();
  ASSERT_EQ(feed.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(feed[i]->version, results[i].version);
    ASSERT_EQ(feed[i]->changes.size(), results[i].changes.size());
    for (size_t c = 0; c < feed[i]->changes.size(); ++c) {
      EXPECT_EQ(feed[i]->changes[c].key, results[i].changes[c].key);
      EXPECT_EQ(feed[i]->changes[c].changed_voxels.min, results[i].changes[c].changed_voxels.min);
      EXPECT_EQ(feed[i]->changes[c].changed_voxels.max, results[i].changes[c].changed_voxels.max);
      // The voxels as of this edit: every voxel of the box has the edit's material.
      const VoxelArrays& v = feed[i]->voxels[c];
      EXPECT_EQ(v.materials, std::vector<uint8_t>(v.region.Volume(), uint8_t(10 + i)));
    }
  }
  // A ChangeLog seeded with them serves a reader that resumes from version 2.
  ChangeLog log(w.world->version(), FeedOptions(100).change_log, feed);
  auto entries = log.Read(2, 10, absl::ZeroDuration());
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ(entries->front()->version, 3u);
}

TEST(StoreFeed, LaterWritesTrimEntriesThatLeaveTheWindow) {
  ScratchDir dir;
  {
    auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(3));
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(EditNumber(*w.world, i).ok());
    EXPECT_EQ(w.store->feed_oldest_resumable_version(), 4u);
    EXPECT_EQ(w.store->feed_entries(), 3u);
  }
  EXPECT_EQ(StoredFeedVersions(dir.path()), (std::vector<uint64_t>{5, 6, 7}));
}

TEST(StoreFeed, ReopeningWithSmallerLimitsTrimsTheStoredFeed) {
  ScratchDir dir;
  {
    auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(10));
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(EditNumber(*w.world, i).ok());
  }
  {
    // Two entries of one 2x2x2 change fit in 2 * (16 + 40 + 16) bytes, not three.
    auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(10, 2 * 72));
    std::vector<ChangeEntryPtr> feed = w.store->TakeFeedAtOpen();
    ASSERT_FALSE(feed.empty());
    EXPECT_EQ(feed.back()->version, 6u);
    EXPECT_EQ(feed.size(), 2u);
    EXPECT_EQ(w.store->feed_oldest_resumable_version(), feed.front()->version - 1);
  }
  std::vector<uint64_t> stored = StoredFeedVersions(dir.path());
  ASSERT_FALSE(stored.empty());
  EXPECT_EQ(stored.back(), 6u);
  EXPECT_EQ(stored, (std::vector<uint64_t>{5, 6}));
}

TEST(StoreFeed, DirectChunkWritesEmptyTheFeed) {
  ScratchDir dir;
  {
    auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(10));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(EditNumber(*w.world, i).ok());
    auto chunk = std::make_shared<Chunk>();
    ASSERT_TRUE(w.store->WriteChunks({{ChunkKey{0, 0, 0}, chunk}}, 9).ok());
    EXPECT_EQ(w.store->feed_oldest_resumable_version(), 9u);
  }
  EXPECT_TRUE(StoredFeedVersions(dir.path()).empty());
  auto w = OpenStoredCaveWorld(dir.path(), FeedOptions(10));
  EXPECT_TRUE(w.store->TakeFeedAtOpen().empty());
  EXPECT_EQ(w.world->version(), 9u);
}

TEST(StoreFeed, CodecRoundTripsAndRejectsDamagedRecords) {
  ChangeEntry entry;
  entry.version = 42;
  entry.changes.push_back({ChunkKey{-1, 0, 2}, IntBox{{-3, 1, 17}, {-1, 2, 19}}});
  entry.voxels.push_back({entry.changes[0].changed_voxels, {1, 2, 3, 4}, {5, 6, 7, 8}});
  entry.bytes = ChangeEntryBytes(entry);
  std::string encoded = store::EncodeChangeEntry(entry);
  EXPECT_EQ(encoded.size(), entry.bytes);
  absl::StatusOr<ChangeEntryPtr> decoded = store::DecodeChangeEntry(42, encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)->changes[0].key, entry.changes[0].key);
  EXPECT_EQ((*decoded)->voxels[0].materials, entry.voxels[0].materials);
  EXPECT_EQ((*decoded)->voxels[0].occupancies, entry.voxels[0].occupancies);
  EXPECT_EQ(store::DecodeChangeEntry(42, encoded.substr(0, encoded.size() - 1)).status().code(),
            absl::StatusCode::kDataLoss);
  // A box outside its chunk is inconsistent.
  ChangeEntry bad = entry;
  bad.changes[0].key = ChunkKey{5, 5, 5};
  EXPECT_EQ(store::DecodeChangeEntry(42, store::EncodeChangeEntry(bad)).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace voxcol
