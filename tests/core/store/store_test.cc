// The RocksDB store under a real World: reopen, identity, compression, lazy loads, corruption,
// checkpoints, concurrent group commit.
#include "core/store/store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <fstream>
#include <set>
#include <thread>

#include "core/broadphase/broadphase_index.h"
#include "core/query/raycast.h"
#include "core/store/keys.h"
#include "core/voxel/edit.h"
#include "core/voxel/edit_batch.h"
#include "tests/core/store/store_test_util.h"

namespace voxcol::store {
namespace {

using testing::OpenStoredCaveWorld;
using testing::ScratchDir;
using testing::StoredCaveWorld;

absl::StatusOr<EditResult> Ball(World& world, Vec3 center, float radius, uint8_t material,
                                EditMode mode = EditMode::kSet) {
  FillBallParams params{center, radius, material, mode};
  return world.Edit([&](ChunkEdit& e) { return FillBall(e, params, EditLimits{}); });
}

// Every voxel of `box` in two worlds, compared.
void ExpectSameVoxels(const World& a, const World& b, const IntBox& box) {
  for (int y = box.min.y; y < box.max.y; ++y)
    for (int z = box.min.z; z < box.max.z; ++z)
      for (int x = box.min.x; x < box.max.x; ++x) {
        ASSERT_EQ(a.GetVoxel({x, y, z}), b.GetVoxel({x, y, z})) << x << "," << y << "," << z;
      }
}

// RocksDB has one opener at a time. The world keeps its edited chunks in memory (no budget), so
// without the loader it still answers every voxel, for comparisons; it must not edit any more.
void CloseStore(StoredCaveWorld& w) {
  w.world->SetLoader(nullptr);
  w.store.reset();
}

TEST(Store, ReopenedWorldHasEveryEditAndTheVersion) {
  ScratchDir dir;
  StoredCaveWorld first = OpenStoredCaveWorld(dir.path());
  ASSERT_TRUE(Ball(*first.world, {3, 5, -7}, 6, kMaterialAir).ok());
  ASSERT_TRUE(Ball(*first.world, {-20, 0, 20}, 4, 9).ok());
  ASSERT_TRUE(Ball(*first.world, {-18, 1, 20}, 3, 11, EditMode::kAdd).ok());
  CloseStore(first);
  StoredCaveWorld second = OpenStoredCaveWorld(dir.path());
  EXPECT_EQ(second.world->version(), 3u);
  ExpectSameVoxels(*first.world, *second.world, {{-32, -16, -32}, {16, 16, 32}});
}

EditBatch KeyedBall(const std::string& key, Vec3 center, uint64_t fingerprint) {
  EditBatch batch;
  batch.primitives.push_back(FillBallParams{center, 2.5f, 7, EditMode::kSet});
  batch.idempotency_key = key;
  batch.fingerprint = fingerprint;
  return batch;
}

// Keys are stored in the edit's own write: after a reopen a retry is answered with the original
// ack and applies nothing, a reused key with other content is refused, and only the newest
// `idempotency_keys` survive (older records are deleted as new ones arrive).
TEST(Store, IdempotencyKeysSurviveAReopenAndStayBounded) {
  ScratchDir dir;
  std::vector<BatchAck> acks;
  {
    StoredCaveWorld first = OpenStoredCaveWorld(dir.path());
    EXPECT_TRUE(first.store->acks_at_open().empty());
    EditBatcher batcher(*first.world, EditLimits{}, 100);
    for (int i = 0; i < 5; ++i) {
      absl::StatusOr<BatchAck> ack =
          batcher.Apply(KeyedBall("k" + std::to_string(i), {float(4 * i), 0, 0}, 100 + i));
      ASSERT_TRUE(ack.ok()) << ack.status();
      acks.push_back(*ack);
    }
    ASSERT_TRUE(Ball(*first.world, {0, 10, 0}, 2, 9).ok());  // an edit without a key
    CloseStore(first);
  }
  {
    StoredCaveWorld second = OpenStoredCaveWorld(dir.path());
    ASSERT_EQ(second.store->acks_at_open().size(), 5u);
    EditBatcher batcher(*second.world, EditLimits{}, 100);
    for (const StoredAck& a : second.store->acks_at_open()) {
      batcher.Restore(a.key, {a.fingerprint, {a.version, a.changed_chunks, false}});
    }
    const uint64_t version = second.world->version();
    absl::StatusOr<BatchAck> retry = batcher.Apply(KeyedBall("k3", {12, 0, 0}, 103));
    ASSERT_TRUE(retry.ok());
    EXPECT_TRUE(retry->replayed);
    EXPECT_EQ(retry->version, acks[3].version);
    EXPECT_EQ(retry->changed_chunks, acks[3].changed_chunks);
    EXPECT_EQ(second.world->version(), version);  // nothing applied
    absl::StatusOr<BatchAck> reused = batcher.Apply(KeyedBall("k3", {40, 0, 0}, 999));
    EXPECT_EQ(reused.status().code(), absl::StatusCode::kInvalidArgument);
    CloseStore(second);
  }
  {
    // A smaller capacity keeps the newest keys, deleting the others for good.
    StoreOptions options;
    options.idempotency_keys = 3;
    auto store = *Store::Open(dir.path(), options);
    ASSERT_EQ(store->acks_at_open().size(), 3u);
    EXPECT_EQ(store->acks_at_open()[0].key, "k2");
    EXPECT_EQ(store->acks_at_open()[2].key, "k4");
    EXPECT_EQ(store->acks_at_open()[2].version, acks[4].version);
  }
  {
    // At capacity, each new key deletes the oldest in the same write; a rewritten key keeps only
    // its newest record.
    StoredCaveWorld w = OpenStoredCaveWorld(dir.path(), true, 3);
    EditBatcher batcher(*w.world, EditLimits{}, 3);
    ASSERT_TRUE(batcher.Apply(KeyedBall("k5", {0, -4, 0}, 105)).ok());
    ASSERT_TRUE(batcher.Apply(KeyedBall("k2", {0, -8, 0}, 202)).ok());  // forgotten by this batcher
    CloseStore(w);
    StoreOptions options;
    options.idempotency_keys = 3;
    auto reopened = *Store::Open(dir.path(), options);
    std::vector<std::string> keys;
    for (const StoredAck& a : reopened->acks_at_open()) keys.push_back(a.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"k4", "k5", "k2"}));
    EXPECT_EQ(reopened->acks_at_open()[2].fingerprint, 202u);
  }
}

TEST(Store, ExistingWorldKeepsItsConfigAndRefusesAnotherGenerator) {
  ScratchDir dir;
  {
    auto store = *Store::Open(dir.path(), StoreOptions{});
    StoredWorld created = *store->OpenWorld({{64, 32, 64}, 0.5f, 42}, 3);
    EXPECT_TRUE(created.created);
  }
  auto store = *Store::Open(dir.path(), StoreOptions{});
  absl::StatusOr<StoredWorld> again = store->OpenWorld({{128, 96, 128}, 1.0f, 1}, 3);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->config.seed, 42u);
  EXPECT_EQ(again->config.size_voxels, (Int3{64, 32, 64}));
  EXPECT_EQ(again->config.voxel_size, 0.5f);
  absl::StatusOr<StoredWorld> other = store->OpenWorld({{64, 32, 64}, 0.5f, 42}, 4);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition) << other.status();
}

TEST(Store, TableFilesAreZstdCompressedAndSmallerThanTheChunks) {
  ScratchDir dir;
  StoreOptions no_sync;
  no_sync.sync = false;
  auto store = *Store::Open(dir.path(), no_sync);
  std::vector<std::pair<ChunkKey, ChunkPtr>> chunks;
  for (int i = 0; i < 2000; ++i) {
    auto chunk = std::make_shared<Chunk>();
    for (int v = 0; v < kChunkVoxels; ++v)
      chunk->voxels[v] = Voxel{uint8_t(2 + (v / 64 + i) % 4), uint8_t(255 - v % 3)};
    chunks.emplace_back(ChunkKey{i % 40, i / 40, 0}, chunk);
  }
  ASSERT_TRUE(store->WriteChunks(chunks, 1).ok());
  ASSERT_TRUE(store->Flush().ok());
  std::vector<std::string> compressions = *store->TableCompressions();
  ASSERT_FALSE(compressions.empty());
  for (const std::string& c : compressions) EXPECT_EQ(c, "ZSTD");
  uint64_t sst_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".sst") sst_bytes += entry.file_size();
  }
  EXPECT_LT(sst_bytes, chunks.size() * sizeof(Chunk) / 4)
      << "raw " << chunks.size() * sizeof(Chunk);
}

TEST(Store, UneditedRegionsAreAnsweredWithoutStoreReads) {
  ScratchDir dir;
  {
    StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
    ASSERT_TRUE(Ball(*w.world, {40, 10, 40}, 3, 9).ok());
  }
  StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
  // A column of raycasts far from the edit touches hundreds of chunks, none of them stored.
  BroadphaseIndex index(*w.world);
  for (float x = -60; x < 0; x += 4) {
    RaycastHit hit = RaycastBlocky(index, {{x, 47, -30}, {0.3f, -1, 0.2f}, 200}, RaycastSettings{});
    ASSERT_TRUE(hit.load_status.ok());
  }
  EXPECT_GT(w.world->resident_chunks(), 50u);
  EXPECT_EQ(w.store->chunk_reads(), 0u);
  EXPECT_EQ(w.world->GetVoxel(w.world->VoxelAt({40, 10, 40})).material, 9);
  EXPECT_GT(w.store->chunk_reads(), 0u);
}

// Replaces the stored value of one chunk behind the store's back.
void OverwriteRecord(const std::string& dir, const ChunkKey& key, const std::string& value) {
  rocksdb::Options options;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir, &db).ok());
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), EncodeKey(kChunkPrefix, key), value).ok());
  delete db;
}

TEST(Store, CorruptRecordIsDataLossForLoadsEditsAndRaysNotGarbage) {
  ScratchDir dir;
  {
    StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
    ASSERT_TRUE(Ball(*w.world, {4, 4, 4}, 3, 9).ok());
  }
  ChunkKey key = ChunkOf({4, 4, 4});
  OverwriteRecord(dir.path(), key, std::string(1029, '\x07'));
  StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
  absl::StatusOr<ChunkPtr> chunk = w.world->LoadChunk(key);
  EXPECT_EQ(chunk.status().code(), absl::StatusCode::kDataLoss) << chunk.status();
  BroadphaseIndex index(*w.world);
  RaycastHit hit = RaycastBlocky(index, {{4.5f, 40, 4.5f}, {0, -1, 0}, 80}, RaycastSettings{});
  EXPECT_EQ(hit.load_status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Ball(*w.world, {4, 4, 4}, 2, 3).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(w.world->version(), 1u);  // the failed edit did not advance it
}

TEST(Store, DamagedTableFileFailsRocksDbChecksumAsDataLoss) {
  ScratchDir dir;
  std::vector<std::pair<ChunkKey, ChunkPtr>> chunks;
  for (int i = 0; i < 64; ++i) {
    auto chunk = std::make_shared<Chunk>();
    for (int v = 0; v < kChunkVoxels; ++v)
      chunk->voxels[v] = Voxel{uint8_t(2 + (v * 7 + i) % 11), uint8_t(v)};
    chunks.emplace_back(ChunkKey{i, 0, 0}, chunk);
  }
  {
    auto store = *Store::Open(dir.path(), StoreOptions{});
    ASSERT_TRUE(store->WriteChunks(chunks, 1).ok());
    ASSERT_TRUE(store->Flush().ok());
  }
  // Flip bytes early in each table file: the first data blocks, where the chunk records live.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() != ".sst") continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    for (int offset = 100; offset < 400; offset += 50) {
      f.seekp(offset);
      f.put('\xAB');
    }
  }
  // Refused at open (StoreCorruption tests); without the check at open, damage found when a
  // chunk is read is DATA_LOSS for that chunk, never garbage.
  EXPECT_EQ(Store::Open(dir.path(), StoreOptions{}).status().code(), absl::StatusCode::kDataLoss);
  StoreOptions unchecked;
  unchecked.verify_on_open = false;
  auto store = *Store::Open(dir.path(), unchecked);
  int data_loss = 0;
  for (const auto& [key, chunk] : chunks) {
    absl::StatusOr<ChunkPtr> loaded = store->Load(key);
    if (loaded.ok()) {
      ASSERT_EQ((*loaded)->voxels, chunk->voxels);  // never garbage
    } else {
      ASSERT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
      ++data_loss;
    }
  }
  EXPECT_GT(data_loss, 0);
}

TEST(Store, CheckpointIsAStoreOfItsOwn) {
  ScratchDir dir;
  StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
  ASSERT_TRUE(Ball(*w.world, {-10, 3, 12}, 5, 13).ok());
  ASSERT_TRUE(w.store->CreateCheckpoint(dir.path("backup")).ok());
  ASSERT_TRUE(Ball(*w.world, {-10, 3, 12}, 5, 14).ok());  // after the checkpoint: not in it
  StoredCaveWorld restored = OpenStoredCaveWorld(dir.path("backup"));
  EXPECT_EQ(restored.world->version(), 1u);
  EXPECT_EQ(restored.world->GetVoxel({-10, 3, 12}).material, 13);
  EXPECT_EQ(w.world->GetVoxel({-10, 3, 12}).material, 14);
}

TEST(Store, ConcurrentEditsAreAllStoredWithDistinctVersionsAndShareWrites) {
  ScratchDir dir;
  constexpr int kThreads = 8, kEditsPerThread = 25;
  {
    StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
    std::vector<std::thread> threads;
    std::vector<std::vector<uint64_t>> versions(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEditsPerThread; ++i) {
          // Overlapping balls: later versions must win in the store as they do in memory.
          absl::StatusOr<EditResult> r =
              Ball(*w.world, {float(t * 3 - 12), 0, float(i % 5)}, 3, uint8_t(2 + t * 30 + i));
          ASSERT_TRUE(r.ok()) << r.status();
          versions[t].push_back(r->version);
        }
      });
    }
    for (auto& th : threads) th.join();
    std::set<uint64_t> all;
    for (const auto& v : versions) {
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
      all.insert(v.begin(), v.end());
    }
    EXPECT_EQ(all.size(), size_t(kThreads * kEditsPerThread));
    EXPECT_EQ(*all.rbegin(), uint64_t(kThreads * kEditsPerThread));
    // Shared writes: fewer than one per edit (strict bounds on syncs: store_durability_test.cc).
    EXPECT_LT(w.store->batches_written(), uint64_t(kThreads * kEditsPerThread));
    std::printf("%d edits in %llu synced writes\n", kThreads * kEditsPerThread,
                (unsigned long long)w.store->batches_written());
    CloseStore(w);
    StoredCaveWorld reopened = OpenStoredCaveWorld(dir.path());
    EXPECT_EQ(reopened.world->version(), uint64_t(kThreads * kEditsPerThread));
    ExpectSameVoxels(*w.world, *reopened.world, {{-20, -8, -8}, {20, 8, 12}});
  }
}

TEST(Store, EvictedChunksComeBackFromTheStoreUnchanged) {
  ScratchDir dir;
  StoredCaveWorld w = OpenStoredCaveWorld(dir.path());
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(Ball(*w.world, {float(i * 9 - 27), 2, 0}, 4, uint8_t(20 + i)).ok());
  auto reference = testing::OpenStoredCaveWorld(dir.path("ref"));  // same edits, no eviction
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(Ball(*reference.world, {float(i * 9 - 27), 2, 0}, 4, uint8_t(20 + i)).ok());
  w.world->SetResidentBudget(64 * 4 * sizeof(Chunk));  // 4 chunks per shard
  ExpectSameVoxels(*w.world, *reference.world, {{-64, -48, -16}, {64, 48, 16}});
  EXPECT_LE(w.world->resident_chunks(), 64u * 4u);
  EXPECT_GT(w.store->chunk_reads(), 100u);  // edited chunks were evicted and read again
}

}  // namespace
}  // namespace voxcol::store
