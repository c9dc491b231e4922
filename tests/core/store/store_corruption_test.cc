// A damaged data directory (issue 38): each kind of file of a store, with a byte flipped in its
// middle or cut to half its length, is refused at open with DATA_LOSS naming the file and what to
// do, unless the store never reads data from that file (then every edit is there, unchanged). The
// store's format is recorded, and a newer one is refused.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/store/store.h"
#include "core/voxel/edit.h"
#include "tests/core/store/store_test_util.h"

namespace voxcol::store {
namespace {

namespace fs = std::filesystem;
using testing::OpenStoredCaveWorld;
using testing::ScratchDir;

constexpr int kEdits = 20;  // 10 flushed to a table file, 10 more after the flush
Vec3 SpotOf(int k) { return {float(-40 + 8 * (k % 10)) + 0.5f, 0.5f, k < 10 ? 0.5f : 20.5f}; }
uint8_t MaterialOf(int k) { return uint8_t(50 + k); }

void EditSpots(World& world, int from, int to) {
  for (int k = from; k < to; ++k) {
    FillBallParams params{SpotOf(k), 3.0f, MaterialOf(k), EditMode::kSet};
    ASSERT_TRUE(world.Edit([&](ChunkEdit& e) { return FillBall(e, params, EditLimits{}); }).ok());
  }
}

// A store with 20 edits, closed cleanly (every edit in table files), at dir.path("db").
std::string MakeClosedStore(const ScratchDir& dir) {
  auto w = OpenStoredCaveWorld(dir.path("db"));
  EditSpots(*w.world, 0, 10);
  EXPECT_TRUE(w.store->Flush().ok());
  EditSpots(*w.world, 10, kEdits);
  return dir.path("db");
}

void Damage(const std::string& file, bool truncate) {
  const uintmax_t size = fs::file_size(file);
  if (truncate) return fs::resize_file(file, size / 2);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(size / 2));
  char c = 0;
  f.get(c);
  f.seekp(std::streamoff(size / 2));
  f.put(char(c ^ 0x5a));
}

// The files RocksDB reads no data from: its options (rewritten at every open) and its identity
// string. Damage to them changes nothing that is served.
bool HoldsNoData(const std::string& name) {
  return name.rfind("OPTIONS-", 0) == 0 || name == "IDENTITY";
}

TEST(StoreCorruption, EveryDamagedFileIsRefusedAtOpenOrHoldsNoData) {
  ScratchDir probe;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(MakeClosedStore(probe))) {
    const std::string name = e.path().filename();
    if (name != "LOCK" && fs::file_size(e.path()) > 0) names.push_back(name);
  }
  // The kinds of file a closed store has: CURRENT, MANIFEST, table files, OPTIONS, IDENTITY and
  // the durable-version mark.
  int tables = 0, manifests = 0;
  for (const std::string& n : names) {
    tables += n.size() > 4 && n.compare(n.size() - 4, 4, ".sst") == 0;
    manifests += n.rfind("MANIFEST-", 0) == 0;
  }
  ASSERT_GE(tables, 1);
  ASSERT_EQ(manifests, 1);
  ASSERT_GE(names.size(), 6u);
  for (const std::string& name : names) {
    for (bool truncate : {false, true}) {
      SCOPED_TRACE(name + (truncate ? " cut to half" : " with a flipped byte"));
      ScratchDir dir;
      const std::string db = MakeClosedStore(dir);
      Damage(db + "/" + name, truncate);
      absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(db, StoreOptions{});
      if (HoldsNoData(name)) {
        ASSERT_TRUE(store.ok()) << store.status();
        store->reset();
        auto w = OpenStoredCaveWorld(db);
        for (int k = 0; k < kEdits; ++k) {
          EXPECT_EQ(w.world->GetVoxel(w.world->VoxelAt(SpotOf(k))).material, MaterialOf(k));
        }
        continue;
      }
      ASSERT_FALSE(store.ok()) << "a damaged " << name << " was opened";
      EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
      const std::string message(store.status().message());
      // The file, or for a manifest cut at a record boundary the mark that caught it.
      const bool names_file = message.find(name) != std::string::npos ||
                              (name.rfind("MANIFEST-", 0) == 0 &&
                               message.find("VOXCOL_DURABLE_VERSION") != std::string::npos);
      EXPECT_TRUE(names_file) << message;
      EXPECT_NE(message.find("checkpoint"), std::string::npos) << "no advice: " << message;
    }
  }
}

TEST(StoreCorruption, LostAcknowledgedEditsOfARunningStoreAreRefused) {
  ScratchDir dir;
  {
    auto w = OpenStoredCaveWorld(dir.path("src"));
    EditSpots(*w.world, 0, kEdits);  // only in the write-ahead log
    // The mark records durable versions every second; after it has, copy the files (what a
    // crash leaves) and cut the log short: acknowledged edits are gone.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    fs::copy(dir.path("src"), dir.path("db"), fs::copy_options::recursive);
  }
  fs::remove(dir.path("db") + "/LOCK");
  std::string log;
  for (const auto& e : fs::directory_iterator(dir.path("db"))) {
    if (e.path().extension() == ".log" && fs::file_size(e.path()) > 0) log = e.path();
  }
  ASSERT_FALSE(log.empty());
  Damage(log, /*truncate=*/true);
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir.path("db"), StoreOptions{});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find("acknowledged edits are missing"), std::string::npos)
      << store.status();
}

TEST(StoreCorruption, AHalfCopiedCheckpointIsRefused) {
  ScratchDir dir;
  {
    auto w = OpenStoredCaveWorld(dir.path("db"));
    EditSpots(*w.world, 0, kEdits);
    ASSERT_TRUE(w.store->CreateCheckpoint(dir.path("checkpoint")).ok());
  }
  std::string manifest;
  for (const auto& e : fs::directory_iterator(dir.path("checkpoint"))) {
    if (e.path().filename().string().rfind("MANIFEST-", 0) == 0) manifest = e.path();
  }
  ASSERT_FALSE(manifest.empty());
  Damage(manifest, /*truncate=*/true);
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(dir.path("checkpoint"), StoreOptions{});
  ASSERT_FALSE(store.ok()) << "a checkpoint with half its manifest was opened";
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
}

TEST(StoreCorruption, ANewerFormatIsRefusedWithTheVersions) {
  ScratchDir dir;
  MakeClosedStore(dir);
  {
    rocksdb::DB* raw = nullptr;
    rocksdb::Options options;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir.path("db"), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string format;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "m:format", &format).ok()) << "no format record";
    EXPECT_EQ(format, "1");
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "m:format", "2").ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir.path("db"), StoreOptions{});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("format 2, newer than this voxcol_server reads (1)"),
            std::string::npos)
      << store.status();
}

}  // namespace
}  // namespace voxcol::store
