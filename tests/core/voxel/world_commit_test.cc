// Group commit in World::Edit: concurrent edits share observer calls, stay in version order, are
// invisible until their group's BeforePublishGroup returned, and a failed group fails everything
// built on it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "core/voxel/world.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

// A slow "disk": each group takes a while, so concurrent edits pile up behind it.
class SlowGroupObserver : public EditObserver {
 public:
  absl::Status BeforePublishGroup(const std::vector<const CommittedEdit*>& edits) override {
    absl::MutexLock lock(&mu);
    for (const CommittedEdit* e : edits) {
      if (world->version() >= e->result.version) visible_early = true;
      for (const auto& [key, chunk] : e->chunks) {
        if (world->GetChunk(key) == chunk) visible_early = true;
      }
      before.push_back(e->result.version);
    }
    group_sizes.push_back(edits.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (fail_at != 0 && edits.front()->result.version <= fail_at &&
        edits.back()->result.version >= fail_at) {
      return absl::UnavailableError("disk full");
    }
    return absl::OkStatus();
  }
  void AfterPublish(const CommittedEdit& e) override {
    absl::MutexLock lock(&mu);
    // The edit's chunks are in place, its version is not visible yet (snapshots at it must find
    // derived data already updated), and the previous edit's is.
    if (world->version() + 1 != e.result.version) out_of_order = true;
    for (const auto& [key, chunk] : e.chunks) {
      if (world->GetChunk(key) != chunk) out_of_order = true;
    }
    after.push_back(e.result.version);
  }

  const World* world = nullptr;
  uint64_t fail_at = 0;
  absl::Mutex mu;
  std::vector<uint64_t> before, after;
  std::vector<size_t> group_sizes;
  bool visible_early = false, out_of_order = false;
};

absl::StatusOr<EditResult> Increment(World& world, const Int3& voxel) {
  return world.Edit([&](ChunkEdit& e) {
    Voxel v = e.Get(voxel);
    e.Set(voxel, Voxel{kMaterialRock, uint8_t(v.occupancy + 1)});
    return absl::OkStatus();
  });
}

TEST(WorldGroupCommit, ConcurrentEditsShareGroupsAndPublishInVersionOrder) {
  auto world = testing::MakeEmptyWorld();
  SlowGroupObserver observer;
  observer.world = world.get();
  world->AddObserver(&observer);
  constexpr int kThreads = 8, kEdits = 30;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      // All threads increment the same voxel: each edit must see every earlier staged one.
      for (int i = 0; i < kEdits; ++i) ASSERT_TRUE(Increment(*world, {1, 2, 3}).ok());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(world->version(), uint64_t(kThreads * kEdits));
  EXPECT_EQ(world->GetVoxel({1, 2, 3}).occupancy, kThreads * kEdits);
  std::vector<uint64_t> expected(kThreads * kEdits);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = i + 1;
  EXPECT_EQ(observer.before, expected);
  EXPECT_EQ(observer.after, expected);
  EXPECT_FALSE(observer.visible_early);
  EXPECT_FALSE(observer.out_of_order);
  EXPECT_LT(observer.group_sizes.size(), expected.size()) << "no edits were grouped";
}

TEST(WorldGroupCommit, FailedGroupFailsEditsStagedOnTopAndTheWorldCarriesOn) {
  auto world = testing::MakeEmptyWorld();
  SlowGroupObserver observer;
  observer.world = world.get();
  observer.fail_at = 40;
  world->AddObserver(&observer);
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) (Increment(*world, {1, 2, 3}).ok() ? ok : failed)++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(failed.load(), 0);
  // Exactly the acknowledged edits are visible, numbered without gaps.
  EXPECT_EQ(world->version(), uint64_t(ok.load()));
  EXPECT_EQ(world->GetVoxel({1, 2, 3}).occupancy, ok.load());
  EXPECT_EQ(observer.after.size(), size_t(ok.load()));
  for (size_t i = 0; i < observer.after.size(); ++i) EXPECT_EQ(observer.after[i], i + 1);
}

// Issue 40: an edit that changes no voxel creates no version and reaches no observer; with an
// idempotency key, an explicit version or a pin it still commits (each needs a version).
TEST(WorldNoOpEdit, ChangesNothingAndKeepsTheVersionUnlessItMustBeRecorded) {
  auto world = testing::MakeEmptyWorld();
  SlowGroupObserver observer;
  observer.world = world.get();
  world->AddObserver(&observer);
  ASSERT_TRUE(Increment(*world, {1, 2, 3}).ok());
  ASSERT_EQ(world->version(), 1u);
  const Voxel before = world->GetVoxel({1, 2, 3});
  auto same = [&](ChunkEdit& e) {
    e.Set({1, 2, 3}, before);  // what is already there
    e.Set({4, 4, 4}, e.Get({4, 4, 4}));
    return absl::OkStatus();
  };
  absl::StatusOr<EditResult> noop = world->Edit(same);
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop->version, 1u);
  EXPECT_TRUE(noop->changes.empty());
  EXPECT_TRUE(noop->dirty_chunks.empty());
  EXPECT_EQ(world->version(), 1u);
  EXPECT_EQ(observer.after.size(), 1u);  // only the real edit was published
  // An empty edit too.
  ASSERT_TRUE(world->Edit([](ChunkEdit&) { return absl::OkStatus(); }).ok());
  EXPECT_EQ(world->version(), 1u);
  // A keyed batch must be recorded with its key: it gets a version of its own.
  absl::StatusOr<EditResult> keyed = world->Edit(same, EditTag{"k1", 7});
  ASSERT_TRUE(keyed.ok());
  EXPECT_EQ(keyed->version, 2u);
  // So does an edit with an explicit version (a replica filling a gap in its primary's feed).
  absl::StatusOr<EditResult> explicit_version = world->Edit([](ChunkEdit& e) {
    e.SetVersion(3);
    return absl::OkStatus();
  });
  ASSERT_TRUE(explicit_version.ok());
  EXPECT_EQ(explicit_version->version, 3u);
  EXPECT_EQ(world->version(), 3u);
  // And the next real change follows on.
  absl::StatusOr<EditResult> next = Increment(*world, {1, 2, 3});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->version, 4u);
}

}  // namespace
}  // namespace voxcol
