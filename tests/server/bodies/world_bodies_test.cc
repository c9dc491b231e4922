// WorldBodies (server/bodies): UpdateBodies (exclusive) and queries (shared) on one world's
// bodies from many threads. Run under TSan by scripts/test-sanitizers.sh (label concurrency);
// here it also checks that a reader never sees a batch half applied.
#include "server/bodies/world_bodies.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace voxcol::server {
namespace {

constexpr int kBodies = 32;
constexpr int kTicks = 2000;

// Body i's x at tick t: every body of a batch moves to the same tick-derived column.
float XAt(int64_t tick) { return 0.25f * float(tick % 100); }

TEST(WorldBodiesConcurrency, ReadersSeeWholeBatchesWhileTheWriterApplies) {
  WorldBodies bodies(BodyLimits{});
  BodyBatch create;
  create.tick = 0;
  for (int i = 0; i < kBodies; ++i) {
    create.create.push_back(
        {BodyId(i), 0, 1, {Quat{}, {XAt(0), 0, float(i)}}, {{1, MakeSphere(0.3f), {}}}});
  }
  ASSERT_TRUE(bodies.Apply(create).ok());
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, reads{0};
  auto reader = [&] {
    while (!done.load()) {
      bodies.Read([&](const BodyWorld& world, const auto& live) {
        const int64_t t = world.latest_tick();
        // Every body of the latest batch at the latest tick's column, and a ray down that column
        // meets one of them: the batch is all there or not at all.
        for (int i = 0; i < kBodies; i += 7) {
          absl::StatusOr<RigidTransform> pose = world.PoseAt(BodyId(i), t);
          if (!pose.ok() || pose->translation.x != XAt(t)) torn.fetch_add(1);
        }
        absl::StatusOr<BodyRayHit> hit =
            world.Raycast({{XAt(t), 5, 3}, {0, -1, 0}, 10, t}, BodyFilter{});
        if (!hit.ok() || !hit->hit || hit->body_id != 3 || live.size() != size_t(kBodies)) {
          torn.fetch_add(1);
        }
      });
      (void)bodies.stats();
      reads.fetch_add(1);
    }
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) readers.emplace_back(reader);
  for (int64_t t = 1; t <= kTicks; ++t) {
    BodyBatch move;
    move.tick = t;
    for (int i = 0; i < kBodies; ++i)
      move.move.push_back({BodyId(i), {Quat{}, {XAt(t), 0, float(i)}}});
    ASSERT_TRUE(bodies.Apply(move).ok());
  }
  done.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(bodies.stats().updates, uint64_t(kTicks + 1));
  EXPECT_EQ(bodies.stats().bodies, kBodies);
}

}  // namespace
}  // namespace voxcol::server
