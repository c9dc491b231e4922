#include "core/voxel/world.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

TEST(ChunkIndexing, NegativeCoordinatesFloorToTheRightChunk) {
  EXPECT_EQ(ChunkOf({0, 0, 0}), (ChunkKey{0, 0, 0}));
  EXPECT_EQ(ChunkOf({7, 8, -1}), (ChunkKey{0, 1, -1}));
  EXPECT_EQ(ChunkOf({-8, -9, -16}), (ChunkKey{-1, -2, -2}));
  EXPECT_EQ(LocalOf({-1, -8, -9}), (Int3{7, 0, 7}));
  EXPECT_EQ(ChunkOrigin({-2, 3, -1}), (Int3{-16, 24, -8}));
}

TEST(ChunkIndexing, ChunkAndLocalRoundTripForEveryVoxelNearTheOrigin) {
  for (int y = -20; y < 20; ++y)
    for (int z = -20; z < 20; ++z)
      for (int x = -20; x < 20; ++x) {
        Int3 v{x, y, z};
        Int3 local = LocalOf(v);
        ASSERT_GE(local.x, 0);
        ASSERT_LT(local.x, kChunkSize);
        ASSERT_EQ(ChunkOrigin(ChunkOf(v)) + local, v);
      }
}

// ChunkOf and LocalOf shift and mask; FloorDiv and FloorMod divide (the oracle), here over every
// coordinate within 2^12 of 0 and of the extremes a world may reach (ValidateWorldConfig: 2^20).
TEST(ChunkIndexing, ShiftAndMaskEqualFloorDivisionAndModulo) {
  int checked = 0;
  for (int32_t centre : {0, 1 << 20, -(1 << 20), (1 << 30), -(1 << 30)}) {
    for (int32_t n = centre - 4096; n <= centre + 4096; ++n) {
      const Int3 v{n, -n, n ^ 5};
      const ChunkKey key = ChunkOf(v);
      const Int3 local = LocalOf(v);
      for (int a = 0; a < 3; ++a) {
        ASSERT_EQ(Component(key, a), FloorDiv(Component(v, a), kChunkSize)) << n << " " << a;
        ASSERT_EQ(Component(local, a), FloorMod(Component(v, a), kChunkSize)) << n << " " << a;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5 * 8193);
}

TEST(ChunkIndexing, LocalIndexIsXFastestThenZThenY) {
  EXPECT_EQ(LocalIndex(1, 0, 0), 1);
  EXPECT_EQ(LocalIndex(0, 0, 1), 8);
  EXPECT_EQ(LocalIndex(0, 1, 0), 64);
  EXPECT_EQ(LocalIndex(7, 7, 7), 511);
}

TEST(World, BoundsAreCentredAndOutsideIsAir) {
  auto world = testing::MakeFunctionWorld(
      [](const Int3&) {
        return Voxel{kMaterialRock, 255};
      },
      {32, 16, 64});
  EXPECT_EQ(world->voxel_bounds().min, (Int3{-16, -8, -32}));
  EXPECT_EQ(world->voxel_bounds().max, (Int3{16, 8, 32}));
  EXPECT_EQ(world->GetVoxel({-16, -8, -32}), (Voxel{kMaterialRock, 255}));
  EXPECT_EQ(world->GetVoxel({15, 7, 31}), (Voxel{kMaterialRock, 255}));
  EXPECT_EQ(world->GetVoxel({16, 0, 0}), Voxel{});
  EXPECT_EQ(world->GetVoxel({0, -9, 0}), Voxel{});
  EXPECT_TRUE(world->ContainsPoint({-16.0f, -8.0f, -32.0f}));
  EXPECT_FALSE(world->ContainsPoint({16.0f, 0, 0}));
}

// 24 voxels: the box [-12, 12) ends halfway into chunks -2 and 1 on each axis.
TEST(World, ABoxNotAlignedToChunksHasItsEdgeChunksAndAirBeyond) {
  auto world = testing::MakeFunctionWorld(
      [](const Int3&) {
        return Voxel{kMaterialRock, 255};
      },
      {24, 24, 24});
  EXPECT_EQ(world->chunk_bounds().min, (Int3{-2, -2, -2}));
  EXPECT_EQ(world->chunk_bounds().max, (Int3{2, 2, 2}));
  EXPECT_EQ(world->GetVoxel({11, 11, 11}), (Voxel{kMaterialRock, 255}));
  // The edge chunks as the mesher reads them: rock inside the box, air beyond it.
  const ChunkPtr low = world->GetChunk({-2, -2, -2}), high = world->GetChunk({1, 1, 1});
  EXPECT_EQ(low->At(LocalOf({-12, -12, -12})), (Voxel{kMaterialRock, 255}));
  EXPECT_EQ(low->At(LocalOf({-13, -12, -12})), Voxel{});
  EXPECT_EQ(high->At(LocalOf({11, 11, 11})), (Voxel{kMaterialRock, 255}));
  EXPECT_EQ(high->At(LocalOf({12, 11, 11})), Voxel{});
}

// Rock everywhere, inside the world box or not, and proven so of every box.
class ProvenRock : public ChunkGenerator {
 public:
  void Generate(const ChunkKey&, Chunk* out) const override {
    out->voxels.fill(Voxel{kMaterialRock, 255});
  }
  uint32_t Version() const override { return 1; }
  bool ProvenUniform(const IntBox&, Voxel* fill) const override {
    *fill = Voxel{kMaterialRock, 255};
    return true;
  }
};

// World::GeneratePart reads a part of a chunk as the chunk reads: rock inside the world box, air
// beyond it. World::ProvenUniform stands for a box inside the world box (or of air) only.
TEST(World, GeneratorPartsReadAsTheChunkAndProveOnlyInside) {
  World world(WorldConfig{{24, 24, 24}, 1.0f, 1}, std::make_unique<ProvenRock>());  // [-12, 12)
  const Voxel rock{kMaterialRock, 255}, sentinel{kMaterialSand, 9};
  struct Case {
    ChunkKey key;
    IntBox part;
    bool proven;
  } cases[] = {{{0, 0, 0}, {{0, 0, 0}, {8, 8, 1}}, true},        // a layer inside
               {{0, 0, 0}, {{0, 0, 7}, {8, 1, 8}}, true},        // a row inside
               {{1, 0, 0}, {{8, 0, 0}, {16, 8, 1}}, false},      // a layer across the face x = 12
               {{1, 1, 1}, {{15, 15, 8}, {16, 16, 16}}, false},  // a row outside the box
               {{-2, 0, 0}, {{-16, 0, 7}, {-8, 8, 8}}, false}};  // a layer across x = -12
  for (const Case& c : cases) {
    Voxel fill;
    ASSERT_EQ(world.ProvenUniform(c.part, &fill), c.proven);
    if (c.proven) EXPECT_EQ(fill, rock);
    Chunk scratch;
    scratch.voxels.fill(sentinel);
    world.GeneratePart(c.key, c.part, &scratch);
    const ChunkPtr whole = world.GetChunk(c.key);
    for (int i = 0; i < kChunkVoxels; ++i) {
      const Int3 v = ChunkOrigin(c.key) + Int3{i & 7, i >> 6, (i >> 3) & 7};
      if (c.part.Contains(v)) {
        EXPECT_EQ(scratch.voxels[i], whole->voxels[i])
            << c.key.x << "," << c.key.y << "," << c.key.z << " voxel " << i;
      }
    }
  }
  EXPECT_EQ(world.GetChunk({1, 0, 0})->At(LocalOf({12, 0, 0})), Voxel{});
  // A box over several chunks, as the broadphase asks of a chunk's 10^3 neighbourhood.
  Voxel fill;
  EXPECT_TRUE(world.ProvenUniform({{-9, -9, -9}, {9, 9, 9}}, &fill));
  EXPECT_FALSE(world.ProvenUniform({{-9, -9, -9}, {13, 9, 9}}, &fill));
}

// One voxel value everywhere, and a count of the voxels written (Generate and GeneratePart).
class Constant : public ChunkGenerator {
 public:
  explicit Constant(Voxel v) : v_(v) {}
  void Generate(const ChunkKey&, Chunk* out) const override {
    out->voxels.fill(v_);
    written += kChunkVoxels;
  }
  uint32_t Version() const override { return 1; }
  mutable int written = 0;

 private:
  Voxel v_;
};

// World::GeneratePart remembers the parts this thread generated last: asked again for a part
// (or a part inside one) of the same world, it copies the voxels instead of generating them,
// but never across worlds, also when a world is destroyed and another built at the same address.
TEST(World, GeneratedPartsAreRememberedPerWorldOnly) {
  const Voxel rock{kMaterialRock, 255}, sand{kMaterialSand, 200}, sentinel{kMaterialSand, 9};
  const WorldConfig config{{64, 64, 64}, 1.0f, 1};
  const ChunkKey key{1, 0, 2};
  const Int3 o = ChunkOrigin(key);
  const IntBox layer{o, o + Int3{8, 8, 1}}, row{o + Int3{0, 3, 0}, o + Int3{8, 4, 1}};
  auto read = [&](const World& world, const IntBox& part) {
    Chunk scratch;
    scratch.voxels.fill(sentinel);
    world.GeneratePart(key, part, &scratch);
    const Voxel first = scratch.At(part.min - o);
    for (int i = 0; i < kChunkVoxels; ++i) {
      const Int3 local{i & 7, i >> 6, (i >> 3) & 7};
      if (part.Contains(o + local) && !(scratch.At(local) == first)) return sentinel;
    }
    return first;  // the part's one value
  };
  auto* rock_gen = new Constant(rock);
  World a(config, std::unique_ptr<ChunkGenerator>(rock_gen));
  auto* sand_gen = new Constant(sand);
  World b(config, std::unique_ptr<ChunkGenerator>(sand_gen));
  EXPECT_EQ(read(a, layer), rock);
  const int generated = rock_gen->written;
  EXPECT_EQ(read(a, row), rock);  // inside the layer: remembered
  EXPECT_EQ(read(a, layer), rock);
  EXPECT_EQ(rock_gen->written, generated);
  const IntBox far_layer{o + Int3{0, 0, 7}, o + Int3{8, 8, 8}};
  EXPECT_EQ(read(a, far_layer), rock);  // not inside a remembered part: generated
  EXPECT_GT(rock_gen->written, generated);
  EXPECT_EQ(read(b, row), sand);  // another world: its own voxels
  EXPECT_GT(sand_gen->written, 0);

  // A world built where a destroyed one stood does not read the destroyed one's parts.
  alignas(World) unsigned char storage[sizeof(World)];
  World* first = new (storage) World(config, std::make_unique<Constant>(rock));
  EXPECT_EQ(read(*first, layer), rock);
  first->~World();
  World* second = new (storage) World(config, std::make_unique<Constant>(sand));
  ASSERT_EQ(static_cast<void*>(second), static_cast<void*>(first));
  EXPECT_EQ(read(*second, layer), sand);
  second->~World();
}

TEST(World, VoxelAtUsesFloorAndVoxelSize) {
  auto world = testing::MakeEmptyWorld({64, 64, 64}, 0.5f);
  EXPECT_EQ(world->VoxelAt({-0.01f, 0.49f, 0.5f}), (Int3{-1, 0, 1}));
  EXPECT_EQ(world->VoxelCenter({-1, 0, 1}), (Vec3{-0.25f, 0.25f, 0.75f}));
}

TEST(World, EveryEditAdvancesTheVersionByOne) {
  auto world = testing::MakeEmptyWorld();
  EXPECT_EQ(world->version(), 0u);
  for (uint64_t i = 1; i <= 5; ++i) {
    auto result = world->Edit([&](ChunkEdit& e) {
      e.Set({int32_t(i), 0, 0}, {kMaterialRock, 255});
      return absl::OkStatus();
    });
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->version, i);
    EXPECT_EQ(world->version(), i);
  }
}

TEST(World, FailedEditPublishesNothing) {
  auto world = testing::MakeEmptyWorld();
  auto result = world->Edit([&](ChunkEdit& e) {
    e.Set({1, 2, 3}, {kMaterialRock, 255});
    return absl::InvalidArgumentError("no");
  });
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(world->version(), 0u);
  EXPECT_EQ(world->GetVoxel({1, 2, 3}), Voxel{});
}

TEST(World, EditSeesItsOwnWritesAndReadersSeeOnlyPublishedChunks) {
  auto world = testing::MakeEmptyWorld();
  ChunkPtr before = world->GetChunk({0, 0, 0});
  auto result = world->Edit([&](ChunkEdit& e) {
    e.Set({1, 1, 1}, {kMaterialDirt, 200});
    EXPECT_EQ(e.Get({1, 1, 1}), (Voxel{kMaterialDirt, 200}));
    EXPECT_EQ(world->GetVoxel({1, 1, 1}), Voxel{});  // not yet published
    return absl::OkStatus();
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(world->GetVoxel({1, 1, 1}), (Voxel{kMaterialDirt, 200}));
  EXPECT_EQ(before->At(1, 1, 1), Voxel{});  // the old chunk object is immutable
}

TEST(World, ChangesAreTightAndDirtyChunksIncludeNeighboursWithinOneVoxel) {
  auto world = testing::MakeEmptyWorld();
  // Voxel (8, 3, 0) sits on the low X face and low Z face of chunk (1, 0, 0).
  auto result = world->Edit([&](ChunkEdit& e) {
    e.Set({8, 3, 0}, {kMaterialRock, 255});
    e.Set({10, 4, 2}, {kMaterialRock, 255});
    return absl::OkStatus();
  });
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->changes.size(), 1u);
  EXPECT_EQ(result->changes[0].key, (ChunkKey{1, 0, 0}));
  EXPECT_EQ(result->changes[0].changed_voxels.min, (Int3{8, 3, 0}));
  EXPECT_EQ(result->changes[0].changed_voxels.max, (Int3{11, 5, 3}));
  // Brute force: a chunk is dirty iff some changed voxel lies within one voxel of its box.
  std::vector<ChunkKey> expected;
  for (int cy = -1; cy <= 1; ++cy)
    for (int cz = -1; cz <= 1; ++cz)
      for (int cx = 0; cx <= 2; ++cx) {
        ChunkKey k{cx, cy, cz};
        Int3 o = ChunkOrigin(k);
        IntBox grown{o - Int3{1, 1, 1}, o + Int3{9, 9, 9}};
        if (grown.Contains({8, 3, 0}) || grown.Contains({10, 4, 2})) expected.push_back(k);
      }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(result->dirty_chunks, expected);
}

TEST(World, UnchangedWritesAreNotReported) {
  auto world = testing::MakeEmptyWorld();
  auto result = world->Edit([&](ChunkEdit& e) {
    e.Set({3, 3, 3}, Voxel{});
    return absl::OkStatus();
  });
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->changes.empty());
  EXPECT_TRUE(result->dirty_chunks.empty());
  EXPECT_EQ(result->version, 0u);  // no change, no version (issue 40; WorldNoOpEdit)
  EXPECT_EQ(world->version(), 0u);
}

TEST(World, ConfigValidationNamesTheField) {
  WorldConfig c;
  c.size_voxels = {100, 64, 64};
  absl::Status s = ValidateWorldConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("size.x"), std::string::npos) << s;
  c.size_voxels = {64, 64, 64};
  c.voxel_size = -1;
  s = ValidateWorldConfig(c);
  EXPECT_NE(s.message().find("voxel_size"), std::string::npos) << s;
}

}  // namespace
}  // namespace voxcol

namespace voxcol {
namespace {

class RecordingObserver : public EditObserver {
 public:
  absl::Status BeforePublish(const CommittedEdit& edit) override {
    seen_before.push_back(edit.result.version);
    // Nothing of this edit may be visible yet.
    visible_early |= world->version() == edit.result.version;
    return fail ? absl::UnavailableError("disk full") : absl::OkStatus();
  }
  void AfterPublish(const CommittedEdit& edit) override {
    seen_after.push_back(edit.result.version);
    chunks_after += edit.chunks.size();
  }
  const World* world = nullptr;
  bool fail = false;
  bool visible_early = false;
  std::vector<uint64_t> seen_before, seen_after;
  size_t chunks_after = 0;
};

TEST(WorldObservers, SeeEveryEditInOrderAndCanAbortIt) {
  auto world = testing::MakeEmptyWorld();
  RecordingObserver observer;
  observer.world = world.get();
  world->AddObserver(&observer);
  auto set = [&](int x) {
    return world->Edit([&](ChunkEdit& e) {
      e.Set({x, 0, 0}, {kMaterialRock, 255});
      e.Set({x + 8, 0, 0}, {kMaterialRock, 255});
      return absl::OkStatus();
    });
  };
  ASSERT_TRUE(set(1).ok());
  ASSERT_TRUE(set(2).ok());
  observer.fail = true;
  auto failed = set(3);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(world->version(), 2u);
  EXPECT_EQ(world->GetVoxel({3, 0, 0}), Voxel{});
  EXPECT_EQ(observer.seen_before, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(observer.seen_after, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(observer.chunks_after, 4u);
  EXPECT_FALSE(observer.visible_early);
}

TEST(WorldObservers, ARemovedObserverSeesNoFurtherEdits) {
  auto world = testing::MakeEmptyWorld();
  RecordingObserver kept, removed;
  kept.world = removed.world = world.get();
  world->AddObserver(&removed);
  world->AddObserver(&kept);
  auto set = [&](int x) {
    return world->Edit([&](ChunkEdit& e) {
      e.Set({x, 0, 0}, {kMaterialRock, 255});
      return absl::OkStatus();
    });
  };
  ASSERT_TRUE(set(1).ok());
  world->RemoveObserver(&removed);
  world->RemoveObserver(&removed);  // a second removal changes nothing
  ASSERT_TRUE(set(2).ok());
  EXPECT_EQ(removed.seen_before, (std::vector<uint64_t>{1}));
  EXPECT_EQ(removed.seen_after, (std::vector<uint64_t>{1}));
  EXPECT_EQ(kept.seen_before, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(kept.seen_after, (std::vector<uint64_t>{1, 2}));
}

class MapLoader : public ChunkLoader {
 public:
  absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override {
    if (key == ChunkKey{1, 0, 0}) return absl::DataLossError("chunk (1,0,0) is corrupt");
    if (key == ChunkKey{0, 0, 0}) return UniformChunk({kMaterialDirt, 255});
    return ChunkPtr(nullptr);
  }
};

TEST(WorldLoader, StoredChunksWinOverTheGeneratorAndLoadErrorsFailEdits) {
  auto world = testing::MakeEmptyWorld();
  MapLoader loader;
  world->SetLoader(&loader);
  world->RestoreVersion(41);
  EXPECT_EQ(world->GetVoxel({3, 3, 3}), (Voxel{kMaterialDirt, 255}));
  EXPECT_EQ(world->GetVoxel({-3, 3, 3}), Voxel{});
  EXPECT_EQ(world->LoadChunk({1, 0, 0}).status().code(), absl::StatusCode::kDataLoss);
  auto edit = world->Edit([&](ChunkEdit& e) {
    e.Set({9, 0, 0}, {kMaterialRock, 255});
    return absl::OkStatus();
  });
  EXPECT_EQ(edit.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(world->version(), 41u);
  auto ok = world->Edit([&](ChunkEdit& e) {
    e.Set({2, 0, 0}, {kMaterialRock, 255});
    return absl::OkStatus();
  });
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->version, 42u);
}

}  // namespace
}  // namespace voxcol

namespace voxcol {
namespace {

// Version v writes value v % 255 + 1 into two voxels of different chunks, so every read tells
// which version it saw.
uint8_t ValueAt(uint64_t version) { return uint8_t(version % 255 + 1); }

TEST(WorldReadSnapshot, ReadersSeeTheirVersionWhileEditsPublishBehindThem) {
  auto world = testing::MakeEmptyWorld();
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, snapshots{0}, overtaken{0};
  std::thread editor([&] {
    // At least 300 edits, and keep going until the reader has taken plenty of snapshots.
    for (int i = 1; i <= 300 || snapshots < 2000; ++i) {
      ASSERT_TRUE(world
                      ->Edit([&](ChunkEdit& e) {
                        e.Set({0, 0, 0}, {kMaterialRock, ValueAt(i)});
                        e.Set({20, 20, 20}, {kMaterialRock, ValueAt(i)});
                        return absl::OkStatus();
                      })
                      .ok());
    }
    stop = true;
  });
  std::thread reader([&] {
    while (!stop) {
      World::ReadSnapshot snapshot(*world);
      const uint8_t expected = snapshot.version() == 0 ? 0 : ValueAt(snapshot.version());
      Voxel a = world->GetVoxel({0, 0, 0});
      // Every 64th snapshot is held while edits go on: they must publish meanwhile.
      if (snapshots % 64 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      Voxel b = world->GetVoxel({20, 20, 20});
      absl::StatusOr<ChunkPtr> chunk = world->LoadChunk({2, 2, 2});
      wrong += a.occupancy != expected || b.occupancy != expected || !chunk.ok() ||
               (*chunk)->At(4, 4, 4).occupancy != expected;
      overtaken += world->version() > snapshot.version();
      ++snapshots;
    }
  });
  editor.join();
  reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(snapshots.load(), 2000);
  EXPECT_GT(overtaken.load(), 0);  // edits did not wait for readers
  EXPECT_GE(world->version(), 300u);
  // Nothing is held for snapshots that ended.
  World::HistoryStats history = world->history_stats();
  EXPECT_EQ(history.snapshots, 0u);
  EXPECT_EQ(history.chunks, 0u);
}

// The history kept for snapshots has a budget: past it the oldest snapshot expires (its reader
// must discard what it read) and its history goes, so memory stays bounded under an endless edit
// stream; younger snapshots keep theirs.
TEST(WorldReadSnapshot, HistoryOverBudgetExpiresTheOldestSnapshot) {
  auto world = testing::MakeEmptyWorld();
  world->SetHistoryBudget(8 * sizeof(Chunk));
  auto touch = [&](int i) {  // replaces 2 chunks
    ASSERT_TRUE(world
                    ->Edit([&](ChunkEdit& e) {
                      e.Set({0, 0, 0}, {kMaterialRock, uint8_t(i)});
                      e.Set({8, 0, 0}, {kMaterialRock, uint8_t(i)});
                      return absl::OkStatus();
                    })
                    .ok());
  };
  touch(1);
  World::ReadSnapshot old_snapshot(*world);
  std::unique_ptr<World::ReadSnapshot> young;
  std::thread other([&] {
    touch(2);
    young = std::make_unique<World::ReadSnapshot>(*world);  // at version 2, on this thread
    for (int i = 3; i <= 4; ++i) touch(i);
    // Within budget (6 chunks): the old snapshot still reads version 1.
    EXPECT_FALSE(old_snapshot.expired());
    for (int i = 5; i <= 40; ++i) {
      touch(i);
      EXPECT_LE(world->history_stats().bytes, 8 * sizeof(Chunk));
    }
    EXPECT_TRUE(young->expired());  // it too fell behind by more than the budget
    young.reset();
  });
  other.join();
  EXPECT_TRUE(old_snapshot.expired());
  EXPECT_EQ(world->history_stats().expired, 2u);
  EXPECT_EQ(world->history_stats().chunks, 0u);
}

// An edit can pin a snapshot of exactly its own version: later edits (from other threads, racing
// it into the same commit groups) are not visible through it, its own changes are.
TEST(WorldReadSnapshot, PinnedSnapshotSeesExactlyItsEditsVersion) {
  auto world = testing::MakeEmptyWorld();
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::map<uint64_t, uint8_t> other_writes;  // version -> value the other editor wrote
  std::thread other([&] {
    for (int i = 1; !stop.load(); ++i) {
      const uint8_t value = uint8_t(i % 250 + 1);
      absl::StatusOr<EditResult> r = world->Edit([&](ChunkEdit& e) {
        e.Set({16, 0, 0}, {kMaterialRock, value});
        return absl::OkStatus();
      });
      ASSERT_TRUE(r.ok());
      absl::MutexLock lock(&mu);
      other_writes[r->version] = value;
    }
  });
  int overtaken = 0;
  for (int i = 1; i <= 60; ++i) {
    std::unique_ptr<World::ReadSnapshot> pinned;
    absl::StatusOr<EditResult> result = world->Edit(
        [&](ChunkEdit& e) {
          e.Set({0, 0, 0}, {kMaterialRock, uint8_t(i)});
          return absl::OkStatus();
        },
        EditTag{}, &pinned);
    ASSERT_TRUE(result.ok());
    ASSERT_NE(pinned, nullptr);
    EXPECT_EQ(pinned->version(), result->version);
    std::this_thread::sleep_for(std::chrono::microseconds(300));  // let the other editor go on
    pinned->Enter();
    EXPECT_EQ(world->ReadVersion(), result->version);
    EXPECT_EQ(world->GetVoxel({0, 0, 0}).occupancy, i);
    const uint8_t seen = world->GetVoxel({16, 0, 0}).occupancy;
    pinned.reset();
    overtaken += world->version() > result->version;
    // What the other editor had written by this version (its acks may lag its publication, so
    // wait until every version below ours is recorded or known to be ours).
    int expected = -1;
    for (int tries = 0; tries < 5000 && expected < 0; ++tries) {
      {
        absl::MutexLock lock(&mu);
        auto it = other_writes.lower_bound(result->version);
        // Versions below ours are our i - 1 earlier edits and the other editor's.
        if (uint64_t(std::distance(other_writes.begin(), it)) + uint64_t(i) == result->version) {
          expected = it == other_writes.begin() ? 0 : std::prev(it)->second;
        }
      }
      if (expected < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(int(seen), expected) << "at version " << result->version;
  }
  stop = true;
  other.join();
  EXPECT_GT(overtaken, 0);
  EXPECT_EQ(world->history_stats().snapshots, 0u);
}

// A consistent read whose snapshot expired while it ran is refused rather than answered.
TEST(WorldReadSnapshot, ReadConsistentIsAbortedWhenItsSnapshotExpires) {
  auto world = testing::MakeEmptyWorld();
  world->SetHistoryBudget(2 * sizeof(Chunk));
  auto touch = [&](int i) {
    std::thread editor([&] {
      ASSERT_TRUE(world
                      ->Edit([&](ChunkEdit& e) {
                        e.Set({8 * (i % 4), 0, 0}, {kMaterialRock, uint8_t(i)});
                        return absl::OkStatus();
                      })
                      .ok());
    });
    editor.join();
  };
  absl::StatusOr<uint64_t> within = world->ReadConsistent([&] {
    touch(1);
    return absl::OkStatus();
  });
  EXPECT_TRUE(within.ok());
  absl::StatusOr<uint64_t> over = world->ReadConsistent([&] {
    for (int i = 2; i < 8; ++i) touch(i);
    return absl::OkStatus();
  });
  EXPECT_EQ(over.status().code(), absl::StatusCode::kAborted) << over.status();
}

// An edit publishes at once while a snapshot is held, without waiting for it. Under the snapshot
// the old content stays readable, also for chunks that were never resident; the history holds
// exactly the replaced chunks and is dropped when the snapshot ends.
TEST(WorldReadSnapshot, EditsPublishAtOnceAndOldChunksLiveAsLongAsTheSnapshot) {
  auto world = testing::MakeEmptyWorld();
  auto fill = [&](uint8_t occupancy) {
    return world->Edit([&](ChunkEdit& e) {
      for (int x = 0; x < 24; x += 8) e.Set({x, 0, 0}, {kMaterialRock, occupancy});
      return absl::OkStatus();
    });
  };
  ASSERT_TRUE(fill(10).ok());
  {
    World::ReadSnapshot snapshot(*world);
    std::thread editor([&] { ASSERT_TRUE(fill(20).ok()); });
    editor.join();  // would deadlock if the edit waited for the snapshot
    EXPECT_EQ(world->version(), 2u);
    EXPECT_EQ(snapshot.version(), 1u);
    for (int x = 0; x < 24; x += 8) EXPECT_EQ(world->GetVoxel({x, 0, 0}).occupancy, 10);
    World::HistoryStats history = world->history_stats();
    EXPECT_EQ(history.chunks, 3u);
    EXPECT_EQ(history.snapshots, 1u);
    EXPECT_EQ(history.oldest, 1u);
    {
      World::ReadSnapshot nested(*world);  // keeps the outer version
      EXPECT_EQ(nested.version(), 1u);
      EXPECT_EQ(world->GetVoxel({8, 0, 0}).occupancy, 10);
    }
    std::thread other([&] { EXPECT_EQ(world->GetVoxel({8, 0, 0}).occupancy, 20); });
    other.join();
  }
  EXPECT_EQ(world->GetVoxel({8, 0, 0}).occupancy, 20);
  EXPECT_EQ(world->history_stats().chunks, 0u);
}

}  // namespace
}  // namespace voxcol

namespace voxcol {
namespace {

// The uniform table answers for resident uniform chunks without the shard; it must follow edits
// that make a chunk uniform or not, under concurrent readers.
TEST(WorldUniformTable, ReadersSeeEditsThatMakeAChunkUniformOrNot) {
  auto world = testing::MakeEmptyWorld();
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, reads{0};
  std::thread reader([&] {
    while (!stop) {
      // Under a snapshot the chunk is one published version: GetVoxel, LoadChunk and the two
      // voxels of the chunk agree.
      World::ReadSnapshot snapshot(*world);
      Voxel a = world->GetVoxel({1, 1, 1}), b = world->GetVoxel({6, 6, 6});
      absl::StatusOr<ChunkPtr> chunk = world->LoadChunk({0, 0, 0});
      torn += !chunk.ok() || a != b || (*chunk)->At(1, 1, 1) != a || (*chunk)->At(6, 6, 6) != b;
      ++reads;
    }
  });
  for (int i = 1; i <= 200 || reads < 1000; ++i) {
    // Odd: the whole chunk rock of one occupancy (uniform); even: only voxel (6,6,6) changes.
    ASSERT_TRUE(world
                    ->Edit([&](ChunkEdit& e) {
                      const Voxel v{kMaterialRock, uint8_t(i % 250 + 1)};
                      if (i % 2 == 1) {
                        for (int y = 0; y < 8; ++y)
                          for (int z = 0; z < 8; ++z)
                            for (int x = 0; x < 8; ++x) e.Set({x, y, z}, v);
                      } else {
                        e.Set({6, 6, 6}, v);
                        e.Set({1, 1, 1}, v);
                      }
                      return absl::OkStatus();
                    })
                    .ok());
    if (i % 2 == 1) {
      EXPECT_EQ(world->GetVoxel({3, 4, 5}), (Voxel{kMaterialRock, uint8_t(i % 250 + 1)}));
    }
  }
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
}

// An evicted uniform chunk is read through the loader again: its load error is reported, never
// answered from the table.
class FlakyLoader : public ChunkLoader {
 public:
  absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override {
    if (key == ChunkKey{0, 0, 0}) {
      if (broken) return absl::DataLossError("chunk (0,0,0) is corrupt");
      return UniformChunk({kMaterialDirt, 200});
    }
    return ChunkPtr(nullptr);
  }
  std::atomic<bool> broken{false};
};

TEST(WorldUniformTable, EvictedChunksAreLoadedAgainAndReportLoadErrors) {
  auto world = testing::MakeEmptyWorld();
  FlakyLoader loader;
  world->SetLoader(&loader);
  world->SetResidentBudget(1);  // one chunk per shard
  EXPECT_EQ(world->GetVoxel({3, 3, 3}), (Voxel{kMaterialDirt, 200}));
  ASSERT_TRUE(world->LoadChunk({0, 0, 0}).ok());
  // Touch enough other chunks that (0,0,0)'s shard evicts it.
  for (int x = 1; x < 4; ++x)
    for (int y = 0; y < 4; ++y)
      for (int z = 0; z < 4; ++z) world->GetChunk({x, y, z});
  loader.broken = true;
  EXPECT_EQ(world->LoadChunk({0, 0, 0}).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(world->GetVoxel({3, 3, 3}), Voxel{});  // GetVoxel reads a failed chunk as air
}

}  // namespace
}  // namespace voxcol
