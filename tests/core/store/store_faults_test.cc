// Storage faults under the store (issue 38), injected through core/store/storage_faults.h: a full
// disk refuses edits with RESOURCE_EXHAUSTED and recovers by itself once space returns; a failed
// fsync or a torn write stops edits for good (UNAVAILABLE) while reads go on; and across power
// cuts after each fault, no acknowledged edit is ever missing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/store/storage_faults.h"
#include "core/store/store.h"
#include "core/voxel/edit.h"
#include "tests/core/store/store_test_util.h"

namespace voxcol::store {
namespace {

using std::chrono::milliseconds;
using testing::OpenStoredCaveWorld;
using testing::ScratchDir;
using testing::StoredCaveWorld;

// Edit k: a ball of its own material at its own place; no two of the first 3,240 overlap, so
// each acknowledged edit can be checked alone after a reopen.
constexpr int kSpots = 18 * 10 * 18;
Vec3 SpotOf(int k) {
  return {float(-54 + 6 * (k % 18)) + 0.5f, float(-30 + 6 * ((k / 18) % 10)) + 0.5f,
          float(-54 + 6 * (k / 180)) + 0.5f};
}
uint8_t MaterialOf(int k) { return uint8_t(100 + k % 150); }

absl::StatusOr<EditResult> SpotEdit(World& world, int k) {
  FillBallParams params{SpotOf(k), 2.0f, MaterialOf(k), EditMode::kSet};
  return world.Edit([&](ChunkEdit& e) { return FillBall(e, params, EditLimits{}); });
}

bool Present(World& world, int k) {
  return world.GetVoxel(world.VoxelAt(SpotOf(k))).material == MaterialOf(k);
}

StoredCaveWorld OpenWith(const std::string& dir, const StorageFaults& faults) {
  StoreOptions options;
  options.env = faults.env();
  return OpenStoredCaveWorld(dir, options);
}

// After faults.Crash() (nothing more reaches the disk) and once no thread edits any more: the
// store closes, and each file loses its unsynced bytes but half of them (a torn tail).
void AfterPowerCut(StoredCaveWorld& w, StorageFaults& faults) {
  w.world->SetLoader(nullptr);
  w.store.reset();
  w.world.reset();
  faults.DropUnsyncedData(/*torn_tail=*/true);
}

TEST(StoreFaults, FullDiskRefusesEditsThenRecoversBySelf) {
  ScratchDir dir;
  StorageFaults faults;
  StoredCaveWorld w = OpenWith(dir.path(), faults);
  for (int k = 0; k < 10; ++k) ASSERT_TRUE(SpotEdit(*w.world, k).ok());
  faults.SetNoSpace(true);
  absl::StatusOr<EditResult> refused = SpotEdit(*w.world, 10);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_NE(refused.status().message().find("disk is full"), std::string::npos);
  EXPECT_EQ(w.store->write_state(), Store::WriteState::kNoSpace);
  EXPECT_EQ(w.world->version(), 10u) << "a refused edit was published";
  EXPECT_FALSE(Present(*w.world, 10));
  EXPECT_TRUE(Present(*w.world, 9)) << "reads stopped with the disk full";
  faults.SetNoSpace(false);
  // RocksDB's recovery polls; edits are accepted again without a reopen.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  absl::StatusOr<EditResult> after = SpotEdit(*w.world, 11);
  while (!after.ok() && std::chrono::steady_clock::now() < until) {
    EXPECT_EQ(after.status().code(), absl::StatusCode::kResourceExhausted) << after.status();
    std::this_thread::sleep_for(milliseconds(20));
    after = SpotEdit(*w.world, 11);
  }
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(w.store->write_state(), Store::WriteState::kOk);
  EXPECT_GE(w.store->write_errors(), 1u);
}

// A failed fsync and a torn write both stop edits for the rest of the process.
void ExpectFailStop(void (*inject)(StorageFaults&), void (*clear)(StorageFaults&)) {
  ScratchDir dir;
  StorageFaults faults;
  StoredCaveWorld w = OpenWith(dir.path(), faults);
  for (int k = 0; k < 10; ++k) ASSERT_TRUE(SpotEdit(*w.world, k).ok());
  inject(faults);
  absl::StatusOr<EditResult> failed = SpotEdit(*w.world, 10);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_NE(failed.status().message().find("no more edits until it is restarted"),
            std::string::npos)
      << failed.status();
  EXPECT_EQ(w.store->write_state(), Store::WriteState::kFailed);
  clear(faults);
  // Not retried: the disk works again, edits are still refused, and nothing is published.
  for (int k = 11; k < 20; ++k) {
    absl::StatusOr<EditResult> r = SpotEdit(*w.world, k);
    ASSERT_FALSE(r.ok()) << "edit " << k << " accepted after a storage failure";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(w.world->version(), 10u);
  EXPECT_TRUE(Present(*w.world, 9)) << "reads stopped after the storage failure";
  faults.Crash();
  AfterPowerCut(w, faults);
  StoredCaveWorld reopened = OpenStoredCaveWorld(dir.path());
  for (int k = 0; k < 10; ++k) EXPECT_TRUE(Present(*reopened.world, k)) << "edit " << k;
  for (int k = 11; k < 20; ++k) EXPECT_FALSE(Present(*reopened.world, k)) << "edit " << k;
  EXPECT_TRUE(SpotEdit(*reopened.world, 20).ok()) << "a restart did not restore edits";
}

TEST(StoreFaults, FailedFsyncStopsEditsUntilRestart) {
  ExpectFailStop([](StorageFaults& f) { f.SetSyncFails(true); },
                 [](StorageFaults& f) { f.SetSyncFails(false); });
}

TEST(StoreFaults, TornWriteStopsEditsUntilRestart) {
  ExpectFailStop([](StorageFaults& f) { f.TearNextWalAppend(); }, [](StorageFaults&) {});
}

enum class Fault { kNoSpace, kSyncError, kTornWrite };

// One run of a fault kind: cycles of "writers edit, the fault strikes mid-run (and, for a full
// disk, clears again), power cut", each reopening the directory of the last, until at least
// `want_acked` edits were acknowledged. After every reopen each acknowledged edit so far must be
// there. Returns the acknowledged edits.
int RunFaultCycles(Fault fault, int want_acked) {
  ScratchDir dir;
  std::vector<int> acked;
  int next = 0;
  for (int cycle = 0; int(acked.size()) < want_acked && next < kSpots - 400 && cycle < 30;
       ++cycle) {
    StorageFaults faults;
    StoredCaveWorld w = OpenWith(dir.path(), faults);
    for (int k : acked) {
      if (!Present(*w.world, k)) ADD_FAILURE() << "acknowledged edit " << k << " lost";
    }
    std::mutex mu;
    std::atomic<int> acks{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int t = 0; t < 2; ++t) {
      writers.emplace_back([&] {
        int k = -1;
        while (!stop.load()) {
          if (k < 0) {
            std::lock_guard<std::mutex> lock(mu);
            if (next >= kSpots) return;
            k = next++;
          }
          if (SpotEdit(*w.world, k).ok()) {
            std::lock_guard<std::mutex> lock(mu);
            acked.push_back(k);
            acks.fetch_add(1);
            k = -1;
          } else {
            std::this_thread::sleep_for(milliseconds(2));  // and retry the same edit
          }
        }
      });
    }
    const int strike = 100 + (cycle * 37) % 100;  // acks before the fault, varied per cycle
    const auto acks_until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (acks.load() < strike && std::chrono::steady_clock::now() < acks_until) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    if (fault == Fault::kNoSpace) faults.SetNoSpace(true);
    if (fault == Fault::kSyncError) faults.SetSyncFails(true);
    if (fault == Fault::kTornWrite) faults.TearNextWalAppend();
    const auto strike_until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (faults.injected() == 0 && std::chrono::steady_clock::now() < strike_until) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    EXPECT_GT(faults.injected(), 0u) << "the fault never struck (no write or sync reached it)";
    std::this_thread::sleep_for(milliseconds(10));
    if (fault == Fault::kNoSpace) {
      faults.SetNoSpace(false);  // space returns (RocksDB looks every 5 s); writers get through
      const int before = acks.load();
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (acks.load() < before + 150 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(milliseconds(1));
      }
      EXPECT_GE(acks.load(), before + 150) << "no recovery after the disk had space again";
    }
    faults.Crash();  // while the writers still run
    stop = true;
    for (std::thread& t : writers) t.join();
    AfterPowerCut(w, faults);
  }
  StoredCaveWorld last = OpenStoredCaveWorld(dir.path());
  int lost = 0;
  for (int k : acked) lost += Present(*last.world, k) ? 0 : 1;
  EXPECT_EQ(lost, 0);
  return int(acked.size());
}

TEST(StoreFaults, NoAcknowledgedEditLostAcrossFaultsAndPowerCuts) {
  for (Fault fault : {Fault::kNoSpace, Fault::kSyncError, Fault::kTornWrite}) {
    const int acked = RunFaultCycles(fault, 1000);
    std::printf("fault %d: %d acknowledged edits over its cycles, all present after each reopen\n",
                int(fault), acked);
    EXPECT_GE(acked, 1000) << "fault " << int(fault);
  }
}

}  // namespace
}  // namespace voxcol::store
