// Versioned queries in the core (issue 19): with retention, queries under World::OpenSnapshotAt
// answer exactly what they answered while that version was current (record then replay, every
// query kind), versions outside the window are OUT_OF_RANGE naming the oldest readable one, and
// the history stays within its byte bound under a continuous edit stream.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/geometry/shapes.h"
#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/raycast.h"
#include "core/query/sweep.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

struct Scene {
  std::unique_ptr<World> world;
  std::unique_ptr<BroadphaseIndex> index;
  std::unique_ptr<ChunkCollisionCache> cache;

  explicit Scene(const World::HistoryRetention& retention)
      : world(testing::MakeCaveWorld(91, {64, 48, 64})) {
    world->SetHistoryRetention(retention);
    index = std::make_unique<BroadphaseIndex>(*world);
    cache = std::make_unique<ChunkCollisionCache>(*world, size_t(256) << 20);
    world->AddObserver(index.get());
    world->AddObserver(cache.get());
  }
  void Apply(const FillBallParams& ball) {
    ASSERT_TRUE(world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); }).ok());
  }
};

// Every query kind's answer, reduced to numbers compared exactly.
std::vector<float> RunQueries(Scene& s, int seed) {
  std::vector<float> out;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-18, 18), d(-1, 1);
  for (int i = 0; i < 40; ++i) {
    const RaycastInput ray{{u(rng), u(rng) * 0.8f, u(rng)}, {d(rng), d(rng), d(rng) + 0.01f}, 40};
    for (RaycastMode mode : {RaycastMode::kSmooth, RaycastMode::kBlocky}) {
      RaycastSettings settings;
      settings.mode = mode;
      const RaycastHit hit = Raycast(*s.index, *s.cache, ray, settings);
      EXPECT_TRUE(hit.load_status.ok());
      out.insert(out.end(), {float(hit.hit), hit.distance, hit.normal.x, hit.normal.y,
                             float(hit.value.material), float(hit.started_inside)});
    }
  }
  const ConvexShape sphere = MakeSphere(2.5f);
  const ConvexShape box = MakeBox({1.5f, 2.0f, 1.0f});
  for (int i = 0; i < 14; ++i) {
    const PosedShape posed{i % 2 ? &sphere : &box, {{u(rng), u(rng) * 0.7f, u(rng)}, {}}};
    SweepResult sweep;
    Sweep(*s.index, *s.cache, {posed, {d(rng), d(rng), d(rng) + 0.01f}, 20}, SweepSettings{},
          &sweep);
    EXPECT_TRUE(sweep.load_status.ok());
    out.insert(out.end(), {float(sweep.hit), float(sweep.initial_overlap), sweep.first.distance,
                           sweep.first.position.x, sweep.first.normal.y});
    OverlapResult overlap;
    OverlapSettings overlap_settings;
    overlap_settings.include_penetration = true;
    Overlap(*s.index, *s.cache, posed, overlap_settings, &overlap);
    EXPECT_TRUE(overlap.load_status.ok());
    out.insert(out.end(), {float(overlap.touches_solid), float(overlap.touches_water),
                           float(overlap.chunks.size()), overlap.penetration.depth});
    ContactsResult contacts;
    Contacts(*s.index, *s.cache, posed, ContactsSettings{}, &contacts);
    EXPECT_TRUE(contacts.load_status.ok());
    out.push_back(float(contacts.buried));
    for (const ChunkContacts& c : contacts.chunks)
      for (int k = 0; k < c.count; ++k)
        out.insert(out.end(), {c.points[k].depth, c.points[k].position.x, c.points[k].normal.z});
  }
  return out;
}

FillBallParams EditNumber(int i) {
  std::mt19937 rng(1000 + i);
  std::uniform_real_distribution<float> u(-16, 16), r(2, 6);
  return {{u(rng), u(rng) * 0.7f, u(rng)},
          r(rng),
          kMaterialRock,
          i % 2 ? EditMode::kAdd : EditMode::kSubtract};
}

TEST(WorldRetention, QueriesAtEachPastVersionReplayExactly) {
  Scene s({.versions = 100});
  struct Recorded {
    uint64_t version;
    std::vector<float> answers;
  };
  std::vector<Recorded> recorded;
  constexpr int kEdits = 16;
  for (int i = 0; i < kEdits; ++i) {
    recorded.push_back({s.world->version(), RunQueries(s, 7)});  // while that version is current
    s.Apply(EditNumber(i));
  }
  for (int i = 0; i < 8; ++i) s.Apply(EditNumber(kEdits + i));  // more edits after the last record
  const std::vector<float> now = RunQueries(s, 7);
  int differ_from_now = 0;
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reads the past-version caches
    for (const Recorded& r : recorded) {
      absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> at = s.world->OpenSnapshotAt(r.version);
      ASSERT_TRUE(at.ok()) << at.status();
      EXPECT_EQ((*at)->version(), r.version);
      const std::vector<float> replayed = RunQueries(s, 7);
      EXPECT_FALSE((*at)->expired());
      EXPECT_TRUE(replayed == r.answers) << "version " << r.version << " pass " << pass;
      if (replayed != now) ++differ_from_now;
    }
  }
  // The edits change what these queries see, so agreeing with the recording is not trivial.
  EXPECT_GT(differ_from_now, 2 * kEdits / 2);
  EXPECT_EQ(RunQueries(s, 7), now);  // no snapshot: the current version again
  EXPECT_GT(s.index->past_record_bytes(), 0u);
  EXPECT_GT(s.cache->stats().past_bytes, 0u);
}

TEST(WorldRetention, NestedPastSnapshotReadsItsOwnVersion) {
  Scene s({.versions = 10});
  const Int3 probe{0, 0, 0};
  const Voxel before = s.world->GetVoxel(probe);
  s.Apply({{0.5f, 0.5f, 0.5f},
           3,
           kMaterialRock,
           before.occupancy > 127 ? EditMode::kSubtract : EditMode::kAdd});
  const Voxel after = s.world->GetVoxel(probe);
  ASSERT_NE(before.occupancy, after.occupancy);
  World::ReadSnapshot outer(*s.world);
  {
    auto past = s.world->OpenSnapshotAt(0);
    ASSERT_TRUE(past.ok());
    EXPECT_EQ(s.world->GetVoxel(probe).occupancy, before.occupancy);
    EXPECT_EQ(s.world->ReadVersion(), 0u);
  }
  EXPECT_EQ(s.world->GetVoxel(probe).occupancy, after.occupancy);
  EXPECT_EQ(s.world->ReadVersion(), 1u);
}

TEST(WorldRetention, OutsideTheWindowIsOutOfRangeNamingTheOldestVersion) {
  Scene s({.versions = 5});
  // Until version 12: an edit that happens to change nothing creates no version.
  for (int i = 0; s.world->version() < 12; ++i) s.Apply(EditNumber(i));
  EXPECT_EQ(s.world->OldestReadableVersion(), 7u);
  EXPECT_TRUE(s.world->OpenSnapshotAt(7).ok());
  absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> old = s.world->OpenSnapshotAt(6);
  ASSERT_EQ(old.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(old.status().message().find("oldest readable version is 7"), std::string::npos)
      << old.status();
  absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> future = s.world->OpenSnapshotAt(13);
  ASSERT_EQ(future.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(future.status().message().find("at version 12"), std::string::npos);
  // Without retention nothing but the current version is readable.
  Scene plain({});
  for (int i = 0; plain.world->version() < 1; ++i) plain.Apply(EditNumber(i));
  EXPECT_EQ(plain.world->OldestReadableVersion(), 1u);
  EXPECT_EQ(plain.world->OpenSnapshotAt(0).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(WorldRetention, TimeWindowMapsServerTimeToVersion) {
  Scene s({.window = absl::Hours(1)});
  std::vector<absl::Time> times;
  for (int i = 0; i < 5; ++i) {
    times.push_back(absl::Now());  // version i is current now
    s.Apply(EditNumber(i));
  }
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<uint64_t> v = s.world->VersionAtTime(times[i]);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, uint64_t(i));
  }
  EXPECT_EQ(*s.world->VersionAtTime(absl::Now()), 5u);
  EXPECT_EQ(s.world->VersionAtTime(absl::Now() + absl::Seconds(10)).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.world->OldestReadableVersion(), 0u);
  // A window that has passed keeps nothing: the versions are dropped on the next edit.
  Scene short_window({.window = absl::Milliseconds(1)});
  short_window.Apply(EditNumber(0));
  const absl::Time then = absl::Now();
  absl::SleepFor(absl::Milliseconds(5));
  short_window.Apply(EditNumber(1));
  absl::SleepFor(absl::Milliseconds(5));
  short_window.Apply(EditNumber(2));
  EXPECT_GE(short_window.world->OldestReadableVersion(), 2u);
  EXPECT_EQ(short_window.world->VersionAtTime(then).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(WorldRetention, HistoryStaysWithinItsBudgetUnderAContinuousEditStream) {
  constexpr size_t kBudget = size_t(256) << 10;
  Scene s({.versions = 1000000, .max_bytes = kBudget});
  size_t peak = 0;
  for (int i = 0; i < 400; ++i) {
    s.Apply(EditNumber(i));
    const World::HistoryStats stats = s.world->history_stats();
    peak = std::max(peak, stats.bytes);
    ASSERT_LE(stats.bytes, kBudget) << "after edit " << i;
  }
  const World::HistoryStats stats = s.world->history_stats();
  std::printf(
      "history: budget %zu bytes, peak %zu bytes, %zu versions kept (%zu chunks), "
      "%.0f bytes per kept version\n",
      kBudget, peak, stats.versions, stats.chunks,
      double(stats.bytes) / double(std::max<size_t>(stats.versions, 1)));
  EXPECT_GT(peak, kBudget / 2);  // the bound was reached, so it was enforced
  EXPECT_LT(stats.versions, 400u);
  EXPECT_EQ(stats.oldest_readable, s.world->version() - stats.versions);
  EXPECT_TRUE(s.world->OpenSnapshotAt(stats.oldest_readable).ok());
  EXPECT_EQ(s.world->OpenSnapshotAt(stats.oldest_readable - 1).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(WorldRetention, RetainedVersionsGoBeforeLiveSnapshotsExpire) {
  Scene s({.versions = 1000});
  s.world->SetHistoryBudget(size_t(64) << 10);  // the snapshot budget, below what retention holds
  for (int i = 0; i < 50; ++i) s.Apply(EditNumber(i));
  World::ReadSnapshot live(*s.world);
  s.Apply(EditNumber(50));
  const World::HistoryStats stats = s.world->history_stats();
  EXPECT_FALSE(live.expired());  // the old retained versions were dropped instead
  EXPECT_LE(stats.bytes, size_t(64) << 10);
  EXPECT_GT(stats.oldest_readable, 0u);
  EXPECT_LE(stats.oldest_readable, live.version());
}

}  // namespace
}  // namespace voxcol
