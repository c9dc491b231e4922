// Edit batches: atomicity, one version per batch, idempotency keys, version preconditions.
#include "core/voxel/edit_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

EditBatch ThreeBlocks() {
  EditBatch batch;
  batch.primitives.push_back(
      FillBlockParams{{0.5f, 0.5f, 0.5f}, Quat{}, {3, 3, 3}, kMaterialRock, EditMode::kAdd});
  batch.primitives.push_back(FillBallParams{{10, 0, 0}, 3, kMaterialDirt, EditMode::kAdd});
  batch.primitives.push_back(ClearParams{{{-20, -20, -20}, {-18, -18, -18}}});
  return batch;
}

TEST(EditBatch, AppliesAllPrimitivesAsExactlyOneVersion) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  absl::StatusOr<BatchAck> ack = batcher.Apply(ThreeBlocks());
  ASSERT_TRUE(ack.ok()) << ack.status();
  EXPECT_EQ(ack->version, 1u);
  EXPECT_EQ(world->version(), 1u);
  EXPECT_FALSE(ack->replayed);
  EXPECT_GT(ack->changed_chunks, 0u);
  EXPECT_EQ(world->GetVoxel({0, 0, 0}), (Voxel{kMaterialRock, 255}));
  EXPECT_EQ(world->GetVoxel({10, 0, 0}), (Voxel{kMaterialDirt, 255}));
}

TEST(EditBatch, InvalidThirdPrimitiveChangesNothingAndNamesItsPath) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  EditBatch batch = ThreeBlocks();
  batch.primitives[2] = FillWedgeParams{{0, 0, 0}, Quat{0, 0, 0, 0}, {1, 1, 1}};
  absl::StatusOr<BatchAck> ack = batcher.Apply(batch);
  ASSERT_EQ(ack.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ack.status().message().rfind("primitives[2].fill_wedge.rotation", 0), 0u)
      << ack.status();
  EXPECT_EQ(world->version(), 0u);
  EXPECT_EQ(world->GetVoxel({0, 0, 0}), Voxel{});
  EXPECT_EQ(world->GetVoxel({10, 0, 0}), Voxel{});
}

TEST(EditBatch, FailureWhileApplyingRollsBackEarlierPrimitives) {
  // Validation passes, but a chunk of the third primitive fails to load while applying.
  class FailingLoader : public ChunkLoader {
   public:
    absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override {
      if (key == ChunkKey{-3, -3, -3}) return absl::DataLossError("corrupt");
      return ChunkPtr(nullptr);
    }
  } loader;
  auto world = testing::MakeEmptyWorld();
  world->SetLoader(&loader);
  EditBatcher batcher(*world, EditLimits{}, 16);
  EXPECT_EQ(batcher.Apply(ThreeBlocks()).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(world->version(), 0u);
  EXPECT_EQ(world->GetVoxel({0, 0, 0}), Voxel{});
}

TEST(EditBatch, RejectsEmptyAndOversizedBatches) {
  auto world = testing::MakeEmptyWorld();
  EditLimits limits;
  limits.max_batch_primitives = 2;
  EditBatcher batcher(*world, limits, 16);
  EXPECT_EQ(batcher.Apply(EditBatch{}).status().message().rfind("primitives", 0), 0u);
  absl::Status too_many = batcher.Apply(ThreeBlocks()).status();
  EXPECT_EQ(too_many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.message().find("maximum 2"), std::string::npos) << too_many;
}

// Keys are bounded: 128 bytes are accepted, 129 (or megabytes) are refused naming the field, and
// the refused batch changes nothing.
TEST(EditBatch, IdempotencyKeysLongerThan128BytesAreRefused) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  EditBatch batch;
  batch.primitives.push_back(
      FillRegionParams{{{0, 0, 0}, {2, 2, 2}}, kMaterialRock, EditMode::kAdd});
  batch.idempotency_key = std::string(kMaxIdempotencyKeyBytes, 'k');
  ASSERT_TRUE(batcher.Apply(batch).ok());
  EXPECT_EQ(world->version(), 1u);
  for (size_t size : {kMaxIdempotencyKeyBytes + 1, size_t(5) << 20}) {
    batch.idempotency_key = std::string(size, 'k');
    absl::Status status = batcher.Apply(batch).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << size;
    EXPECT_EQ(status.message().rfind("idempotency_key", 0), 0u) << status;
  }
  EXPECT_EQ(world->version(), 1u);
}

TEST(EditBatch, RetriedKeyReturnsTheOriginalAckAndAppliesOnce) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  EditBatch dig;
  dig.primitives.push_back(FillRegionParams{{{0, 0, 0}, {4, 4, 4}}, kMaterialRock, EditMode::kAdd});
  dig.idempotency_key = "client-a/1";
  dig.fingerprint = 11;
  absl::StatusOr<BatchAck> first = batcher.Apply(dig);
  ASSERT_TRUE(first.ok());
  // Someone else edits in between; the retry must not re-apply on top of that.
  EditBatch other;
  other.primitives.push_back(ClearParams{{{0, 0, 0}, {2, 2, 2}}});
  ASSERT_TRUE(batcher.Apply(other).ok());
  absl::StatusOr<BatchAck> retry = batcher.Apply(dig);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->version, first->version);
  EXPECT_EQ(retry->changed_chunks, first->changed_chunks);
  EXPECT_TRUE(retry->replayed);
  EXPECT_EQ(world->version(), 2u);
  EXPECT_EQ(world->GetVoxel({1, 1, 1}), Voxel{});
  dig.fingerprint = 12;
  EXPECT_EQ(batcher.Apply(dig).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EditBatch, ConcurrentRetriesOfOneKeyApplyOnce) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  EditBatch batch = ThreeBlocks();
  batch.idempotency_key = "k";
  std::vector<uint64_t> versions(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { versions[i] = batcher.Apply(batch).value().version; });
  }
  for (auto& t : threads) t.join();
  for (uint64_t v : versions) EXPECT_EQ(v, 1u);
  EXPECT_EQ(world->version(), 1u);
}

// A slow durable write (like a synced store): while one group commits, the other batches queue up
// and commit together. Batches with different keys must not be serialized by the batcher, and the
// observer sees each batch's key.
class SlowStore : public EditObserver {
 public:
  absl::Status BeforePublishGroup(const std::vector<const CommittedEdit*>& edits) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    absl::MutexLock lock(&mu);
    ++groups;
    for (const CommittedEdit* e : edits) keys.push_back(e->tag->idempotency_key);
    return absl::OkStatus();
  }
  absl::Mutex mu;
  int groups = 0;
  std::vector<std::string> keys;
};

TEST(EditBatch, BatchesWithDifferentKeysCommitInGroups) {
  auto world = testing::MakeEmptyWorld();
  SlowStore store;
  world->AddObserver(&store);
  EditBatcher batcher(*world, EditLimits{}, 16);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      EditBatch batch = ThreeBlocks();
      batch.idempotency_key = i % 2 ? "key-" + std::to_string(i) : "";
      EXPECT_TRUE(batcher.Apply(batch).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(world->version(), 8u);
  absl::MutexLock lock(&store.mu);
  EXPECT_LT(store.groups, 8);
  std::sort(store.keys.begin(), store.keys.end());
  EXPECT_EQ(store.keys,
            (std::vector<std::string>{"", "", "", "", "key-1", "key-3", "key-5", "key-7"}));
}

TEST(EditBatch, IdempotencyTableForgetsTheOldestKeysBeyondItsCapacity) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 2);
  auto keyed = [](const char* key, int x) {
    EditBatch b;
    b.primitives.push_back(
        FillRegionParams{{{x, 0, 0}, {x + 1, 1, 1}}, kMaterialRock, EditMode::kAdd});
    b.idempotency_key = key;
    return b;
  };
  ASSERT_EQ(batcher.Apply(keyed("a", 0))->version, 1u);
  ASSERT_EQ(batcher.Apply(keyed("b", 1))->version, 2u);
  ASSERT_EQ(batcher.Apply(keyed("c", 2))->version, 3u);
  EXPECT_TRUE(batcher.Apply(keyed("c", 2))->replayed);
  EXPECT_TRUE(batcher.Apply(keyed("b", 1))->replayed);
  EXPECT_FALSE(batcher.Apply(keyed("a", 0))->replayed);  // forgotten: applies again
  EXPECT_EQ(world->version(), 4u);
}

TEST(EditBatch, ViolatedPreconditionFailsAndChangesNothing) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  EditBatch batch = ThreeBlocks();
  batch.expected_version = 0;
  ASSERT_EQ(batcher.Apply(batch)->version, 1u);
  batch.primitives[0] = FillRegionParams{{{20, 0, 0}, {22, 2, 2}}, kMaterialSand, EditMode::kAdd};
  absl::StatusOr<BatchAck> stale = batcher.Apply(batch);  // still expects version 0
  ASSERT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(stale.status().message().find("expected_version 0"), std::string::npos)
      << stale.status();
  EXPECT_EQ(world->version(), 1u);
  EXPECT_EQ(world->GetVoxel({20, 0, 0}), Voxel{});
  batch.expected_version = 1;
  EXPECT_EQ(batcher.Apply(batch)->version, 2u);
}

// A slow durable write keeps each group's edits staged but unpublished for a while, so batches
// racing with the same expected version are staged one after the other before any is visible:
// exactly one may apply (the check is against the staged version, not the published one).
class SlowSync : public EditObserver {
 public:
  absl::Status BeforePublishGroup(const std::vector<const CommittedEdit*>&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return absl::OkStatus();
  }
};

TEST(EditBatch, ConcurrentBatchesWithTheSameExpectedVersionApplyOnce) {
  auto world = testing::MakeEmptyWorld();
  SlowSync slow;
  world->AddObserver(&slow);
  EditBatcher batcher(*world, EditLimits{}, 16);
  for (int round = 0; round < 5; ++round) {
    const uint64_t expected = world->version();
    std::atomic<int> applied{0}, refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        EditBatch batch;
        // Voxels no earlier round set: each batch changes something (a batch that changes
        // nothing creates no version, so it would pass the check without taking it).
        batch.primitives.push_back(FillRegionParams{
            {{t, round, 0}, {t + 1, round + 1, 1}}, kMaterialRock, EditMode::kSet});
        batch.expected_version = expected;
        absl::StatusOr<BatchAck> ack = batcher.Apply(batch);
        if (ack.ok()) ++applied;
        if (ack.status().code() == absl::StatusCode::kFailedPrecondition) ++refused;
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(applied.load(), 1) << "round " << round;
    EXPECT_EQ(refused.load(), 7) << "round " << round;
    EXPECT_EQ(world->version(), expected + 1);
  }
}

// Read replicas (issue 22): a refusing batcher applies nothing; a re-seed edit takes the version
// it names and later edits continue after it.
TEST(EditBatch, RefusedBatchesChangeNothing) {
  auto world = testing::MakeEmptyWorld();
  EditBatcher batcher(*world, EditLimits{}, 16);
  batcher.RefuseEdits(absl::FailedPreconditionError("read replica of 10.0.0.1:50051"));
  absl::StatusOr<BatchAck> ack = batcher.Apply(ThreeBlocks());
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(world->version(), 0u);
  EXPECT_EQ(world->GetVoxel({0, 0, 0}), Voxel{});
}

TEST(EditBatch, SetVersionJumpsAndLaterEditsFollow) {
  auto world = testing::MakeEmptyWorld();
  absl::StatusOr<EditResult> seeded = world->Edit([](ChunkEdit& edit) {
    edit.Set({1, 2, 3}, Voxel{kMaterialRock, 255});
    edit.SetVersion(40);
    return absl::OkStatus();
  });
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  EXPECT_EQ(seeded->version, 40u);
  EXPECT_EQ(world->version(), 40u);
  EXPECT_EQ(world->GetVoxel({1, 2, 3}), (Voxel{kMaterialRock, 255}));
  absl::StatusOr<EditResult> next = world->Edit([](ChunkEdit& edit) {
    edit.SetVersion(5);  // not above the base: ignored
    return absl::OkStatus();
  });
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->version, 41u);
}

}  // namespace
}  // namespace voxcol
