// Snapshot isolation end to end in the core: queries run under a World::ReadSnapshot while later
// edits publish (and other threads fill the broadphase and the collision cache with the newer
// data) answer exactly what a second world, replayed from the same seed up to the snapshot's
// version and never edited further, answers. The replay is the oracle: it shares no history,
// cache entry or mask record with the world under test.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/geometry/shapes.h"
#include "core/query/contacts.h"
#include "core/query/raycast.h"
#include "core/voxel/edit.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

struct Scene {
  std::unique_ptr<World> world;
  std::unique_ptr<BroadphaseIndex> index;
  std::unique_ptr<ChunkCollisionCache> cache;

  Scene() : world(testing::MakeCaveWorld(77, {64, 48, 64})) {
    index = std::make_unique<BroadphaseIndex>(*world);
    cache = std::make_unique<ChunkCollisionCache>(*world, size_t(256) << 20);
    world->AddObserver(index.get());
    world->AddObserver(cache.get());
  }
  // Counts the edits that changed something: only those make a version.
  void Apply(const FillBallParams& ball) {
    absl::StatusOr<EditResult> r =
        world->Edit([&](ChunkEdit& e) { return FillBall(e, ball, EditLimits{}); });
    ASSERT_TRUE(r.ok());
    changed += !r->changes.empty();
  }
  uint64_t changed = 0;
};

// What one pass of queries answered, reduced to comparable numbers.
struct Answers {
  std::vector<float> values;
  bool operator==(const Answers& o) const { return values == o.values; }
};

std::vector<RaycastInput> Rays() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-20, 20), d(-1, 1);
  std::vector<RaycastInput> rays;
  for (int i = 0; i < 300; ++i) {
    rays.push_back({{u(rng), u(rng) * 0.8f, u(rng)}, {d(rng), d(rng), d(rng) + 0.01f}, 40});
  }
  return rays;
}

Answers RunQueries(Scene& s) {
  Answers out;
  for (const RaycastInput& ray : Rays()) {
    for (RaycastMode mode : {RaycastMode::kSmooth, RaycastMode::kBlocky}) {
      RaycastSettings settings;
      settings.mode = mode;
      RaycastHit hit = Raycast(*s.index, *s.cache, ray, settings);
      EXPECT_TRUE(hit.load_status.ok());
      out.values.insert(out.values.end(), {float(hit.hit), hit.distance, hit.normal.x, hit.normal.y,
                                           float(hit.value.material), float(hit.started_inside)});
    }
  }
  const ConvexShape sphere = MakeSphere(3.5f);
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-16, 16);
  for (int i = 0; i < 40; ++i) {
    PosedShape posed{&sphere, {{u(rng), u(rng) * 0.7f, u(rng)}, {}}};
    ContactsResult r;
    Contacts(*s.index, *s.cache, posed, ContactsSettings{}, &r);
    EXPECT_TRUE(r.load_status.ok());
    out.values.push_back(float(r.buried));
    for (const ChunkContacts& c : r.chunks)
      for (int k = 0; k < c.count; ++k)
        out.values.insert(out.values.end(), {c.points[k].depth, c.points[k].position.x,
                                             c.points[k].position.y, c.points[k].normal.z});
  }
  return out;
}

std::vector<FillBallParams> Edits() {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-18, 18), r(3, 7);
  std::vector<FillBallParams> edits;
  for (int i = 0; i < 10; ++i) {
    edits.push_back({{u(rng), u(rng) * 0.7f, u(rng)},
                     r(rng),
                     kMaterialRock,
                     i % 2 ? EditMode::kAdd : EditMode::kSubtract});
  }
  return edits;
}

TEST(SnapshotReplay, QueriesUnderASnapshotAnswerAsTheWorldDidAtItsVersion) {
  const std::vector<FillBallParams> edits = Edits();
  constexpr size_t kSnapshotAt = 3;
  Scene live;
  RunQueries(live);  // warm masks and meshes at version 0
  for (size_t i = 0; i < kSnapshotAt; ++i) live.Apply(edits[i]);
  Answers under_snapshot, after;
  {
    World::ReadSnapshot snapshot(*live.world);
    ASSERT_EQ(snapshot.version(), live.changed);
    RunQueries(live);  // the cache and masks now hold this version's data
    for (size_t i = kSnapshotAt; i < edits.size(); ++i) {
      live.Apply(edits[i]);  // publishes at once, although this thread holds a snapshot
      // Another thread, without a snapshot, fills the index and the cache with the new data.
      std::thread current([&] { RunQueries(live); });
      current.join();
    }
    EXPECT_EQ(live.world->version(), live.changed);
    EXPECT_GT(live.world->version(), snapshot.version());
    EXPECT_GT(live.world->history_stats().chunks, 0u);
    under_snapshot = RunQueries(live);
  }
  EXPECT_EQ(live.world->history_stats().chunks, 0u);
  after = RunQueries(live);

  Scene replay_at_snapshot;
  for (size_t i = 0; i < kSnapshotAt; ++i) replay_at_snapshot.Apply(edits[i]);
  Scene replay_all;
  for (const FillBallParams& e : edits) replay_all.Apply(e);
  const Answers expected_then = RunQueries(replay_at_snapshot);
  const Answers expected_now = RunQueries(replay_all);
  // The edits change what the queries see, so agreeing with the right replay is not trivial.
  ASSERT_FALSE(expected_then == expected_now);
  EXPECT_TRUE(under_snapshot == expected_then);
  EXPECT_TRUE(after == expected_now);
}

}  // namespace
}  // namespace voxcol
