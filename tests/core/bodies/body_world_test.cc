// The body registry: the history window and its errors, input errors that name the field, limits,
// all-or-nothing batches and the memory bound.
#include "core/bodies/body_world.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

#include "tests/core/bodies/body_test_util.h"

namespace voxcol {
namespace {

BodyDesc Sphere(BodyId id, const Vec3& at) {
  BodyDesc b;
  b.id = id;
  b.pose = {Quat{}, at};
  b.parts = {{1, MakeSphere(0.5f), {}}};
  return b;
}

BodyBatch Tick(int64_t tick) {
  BodyBatch b;
  b.tick = tick;
  return b;
}

// Applies ticks first..last, moving body 1 to x = tick.
void RunTicks(BodyWorld* world, int64_t first, int64_t last) {
  for (int64_t t = first; t <= last; ++t) {
    BodyBatch b = Tick(t);
    if (t == first && world->body_count() == 0) {
      b.create.push_back(Sphere(1, {float(t), 0, 0}));
    } else {
      b.move.push_back({1, {Quat{}, {float(t), 0, 0}}});
    }
    ASSERT_TRUE(world->Apply(b).ok());
  }
}

TEST(BodyHistory, BeyondHistoryIsOutOfRangeNamingTheOldestTick) {
  BodyWorld world;  // history_ticks 60
  RunTicks(&world, 1, 100);
  EXPECT_EQ(world.oldest_tick(), 41);
  BodyRaycastInput ray{{40, 0, -5}, {0, 0, 1}, 10, 40};
  absl::StatusOr<BodyRayHit> old = world.Raycast(ray, {});
  ASSERT_EQ(old.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(old.status().message().find("oldest body tick kept, 41"), std::string::npos)
      << old.status();
  // The oldest tick kept answers, with the body where it was then.
  ray = {{41, 0, -5}, {0, 0, 1}, 10, 41};
  ASSERT_TRUE(world.Raycast(ray, {}).ok());
  EXPECT_TRUE(world.Raycast(ray, {})->hit);
  EXPECT_EQ(world.PoseAt(1, 41)->translation.x, 41);
  // Newer than the latest tick: also OUT_OF_RANGE, naming the latest.
  ray.tick = 101;
  absl::StatusOr<BodyRayHit> future = world.Raycast(ray, {});
  ASSERT_EQ(future.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(future.status().message().find("latest body tick 100"), std::string::npos);
  // Before any batch.
  BodyWorld empty;
  EXPECT_EQ(empty.Raycast(ray, {}).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(BodyHistory, EveryTickOfTheWindowKeepsItsPoseWithSparseMoves) {
  BodyLimits limits;
  limits.history_ticks = 10;
  BodyWorld world(limits);
  // Body 1 moves every tick, body 2 only every 7th: its ring holds few samples.
  ASSERT_TRUE(world
                  .Apply([] {
                    BodyBatch b = Tick(0);
                    b.create = {Sphere(1, {0, 0, 0}), Sphere(2, {0, 5, 0})};
                    return b;
                  }())
                  .ok());
  for (int64_t t = 1; t <= 50; ++t) {
    BodyBatch b = Tick(t);
    b.move.push_back({1, {Quat{}, {float(t), 0, 0}}});
    if (t % 7 == 0) b.move.push_back({2, {Quat{}, {float(t), 5, 0}}});
    ASSERT_TRUE(world.Apply(b).ok());
    for (int64_t q = world.oldest_tick(); q <= t; ++q) {
      ASSERT_EQ(world.PoseAt(1, q)->translation.x, float(q));
      ASSERT_EQ(world.PoseAt(2, q)->translation.x, float(q / 7 * 7)) << q;
    }
  }
}

TEST(BodyHistory, RemovedBodyStaysVisibleToPastTicksThenItsSlotIsReused) {
  BodyLimits limits;
  limits.history_ticks = 5;
  BodyWorld world(limits);
  BodyBatch b = Tick(1);
  b.create.push_back(Sphere(9, {0, 0, 0}));
  ASSERT_TRUE(world.Apply(b).ok());
  const int64_t bytes = world.history_bytes();
  b = Tick(2);
  b.remove.push_back(9);
  ASSERT_TRUE(world.Apply(b).ok());
  EXPECT_EQ(world.body_count(), 0);
  const BodyRaycastInput at1{{0, 0, -5}, {0, 0, 1}, 10, 1};
  EXPECT_TRUE(world.Raycast(at1, {})->hit);  // as it was at tick 1
  BodyRaycastInput at2 = at1;
  at2.tick = 2;
  EXPECT_FALSE(world.Raycast(at2, {})->hit);  // removed at tick 2
  // The id can be created again at once; the old body expires from the window.
  b = Tick(3);
  b.create.push_back(Sphere(9, {3, 0, 0}));
  ASSERT_TRUE(world.Apply(b).ok());
  EXPECT_EQ(world.PoseAt(9, 1)->translation.x, 0);
  EXPECT_EQ(world.PoseAt(9, 3)->translation.x, 3);
  for (int64_t t = 4; t <= 20; ++t) ASSERT_TRUE(world.Apply(Tick(t)).ok());
  EXPECT_EQ(world.tree().proxy_count(), 1);
  // Create/remove cycles reuse slots: the held bytes stay at two slots' worth.
  for (int64_t t = 21; t <= 200; ++t) {
    BodyBatch c = Tick(t);
    c.create.push_back(Sphere(1000 + t, {0, 0, 0}));
    if (t > 21) c.remove.push_back(1000 + t - 1);
    ASSERT_TRUE(world.Apply(c).ok());
  }
  EXPECT_LE(world.history_bytes(), 8 * bytes);
}

TEST(BodyHistory, MemoryStaysBoundedWhileEveryBodyMovesEveryTick) {
  BodyLimits limits;
  limits.max_history_bytes = 4 << 20;
  BodyWorld world(limits);
  BodyBatch b = Tick(0);
  for (BodyId id = 0; id < 200; ++id) b.create.push_back(Sphere(id, {float(id), 0, 0}));
  ASSERT_TRUE(world.Apply(b).ok());
  const int64_t after_create = world.history_bytes();
  EXPECT_LE(after_create, limits.max_history_bytes);
  std::mt19937 rng(1);
  for (int64_t t = 1; t <= 500; ++t) {
    BodyBatch m = Tick(t);
    for (BodyId id = 0; id < 200; ++id)
      m.move.push_back({id, {Quat{}, {float(rng() % 100), 0, 0}}});
    ASSERT_TRUE(world.Apply(m).ok());
  }
  EXPECT_EQ(world.history_bytes(), after_create);
}

TEST(BodyBatchErrors, NameTheField) {
  BodyLimits limits;
  limits.max_bodies = 3;
  limits.max_parts_per_body = 2;
  BodyWorld world(limits);
  BodyBatch ok = Tick(10);
  ok.create = {Sphere(1, {}), Sphere(2, {0, 3, 0})};
  ASSERT_TRUE(world.Apply(ok).ok());
  auto expect = [&](const BodyBatch& b, absl::StatusCode code, const std::string& field) {
    const absl::Status s = world.Apply(b);
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(field), std::string::npos) << s << " should name " << field;
    // All or nothing: nothing changed.
    EXPECT_EQ(world.latest_tick(), 10);
    EXPECT_EQ(world.body_count(), 2);
  };
  expect(Tick(10), absl::StatusCode::kInvalidArgument, "tick: 10");
  expect(Tick(9), absl::StatusCode::kInvalidArgument, "tick: 9");
  BodyBatch b = Tick(11);
  b.move = {{1, {}}, {1, {}}};
  expect(b, absl::StatusCode::kInvalidArgument, "move[1].id");
  b = Tick(11);
  b.move = {{1, {}}, {5, {}}};
  expect(b, absl::StatusCode::kNotFound, "move[1].id");
  b = Tick(11);
  b.remove = {2, 77};
  expect(b, absl::StatusCode::kNotFound, "remove[1]");
  b = Tick(11);
  b.create = {Sphere(2, {})};
  expect(b, absl::StatusCode::kAlreadyExists, "create[0].id");
  b = Tick(11);
  b.create = {Sphere(3, {})};
  b.create[0].layer = 0;
  expect(b, absl::StatusCode::kInvalidArgument, "create[0].layer");
  b = Tick(11);
  b.create = {Sphere(3, {})};
  b.create[0].parts.push_back({2, MakeSphere(1), {}});
  b.create[0].parts.push_back({3, MakeSphere(1), {}});
  expect(b, absl::StatusCode::kResourceExhausted, "max_parts_per_body");
  b = Tick(11);
  b.create = {Sphere(3, {})};
  b.create[0].parts.push_back({1, MakeSphere(1), {}});
  expect(b, absl::StatusCode::kInvalidArgument, "create[0].parts[1].part_id");
  b = Tick(11);
  b.create = {Sphere(3, {})};
  b.create[0].parts[0].shape.convex_radius = -1;
  expect(b, absl::StatusCode::kInvalidArgument, "create[0].parts[0].shape");
  b = Tick(11);
  b.create = {Sphere(3, {})};
  b.create[0].parts[0].shape = MakeTriangle({0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  expect(b, absl::StatusCode::kInvalidArgument, "create[0].parts[0].shape");
  b = Tick(11);
  b.create = {Sphere(3, {}), Sphere(4, {})};
  expect(b, absl::StatusCode::kResourceExhausted, "max_bodies");
  b = Tick(11);
  b.move = {{1, {Quat{2, 0, 0, 0}, {}}}};
  expect(b, absl::StatusCode::kInvalidArgument, "move[0].pose.rotation");
  b = Tick(11);
  b.move = {{1, {Quat{}, {NAN, 0, 0}}}};
  expect(b, absl::StatusCode::kInvalidArgument, "move[0].pose");
  b = Tick(11);
  b.create = {Sphere(3, {}), Sphere(3, {})};
  expect(b, absl::StatusCode::kInvalidArgument, "create[1].id");
  b = Tick(11);
  b.move = {{1, {}}};
  b.remove = {1};
  expect(b, absl::StatusCode::kInvalidArgument, "remove[0]");
  // History bytes: a world that can hold one body's history only.
  BodyLimits tight;
  tight.max_history_bytes = 4000;
  BodyWorld small(tight);
  BodyBatch one = Tick(1);
  one.create = {Sphere(1, {})};
  ASSERT_TRUE(small.Apply(one).ok()) << small.history_bytes();
  one = Tick(2);
  one.create = {Sphere(2, {})};
  const absl::Status s = small.Apply(one);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("max_history_bytes"), std::string::npos) << s;
}

TEST(BodyLimitsErrors, NameTheField) {
  EXPECT_TRUE(BodyWorld::CheckLimits({}).ok());
  BodyLimits l;
  l.history_ticks = 0;
  EXPECT_NE(BodyWorld::CheckLimits(l).message().find("history_ticks"), std::string::npos);
  l = {};
  l.max_parts_per_body = -1;
  EXPECT_NE(BodyWorld::CheckLimits(l).message().find("max_parts_per_body"), std::string::npos);
  l = {};
  l.fat_margin = NAN;
  EXPECT_EQ(BodyWorld::CheckLimits(l).code(), absl::StatusCode::kInvalidArgument);
}

TEST(BodyQueryErrors, NameTheField) {
  BodyWorld world;
  BodyBatch b = Tick(1);
  b.create = {Sphere(1, {})};
  ASSERT_TRUE(world.Apply(b).ok());
  auto code_and_field = [](const absl::Status& s, absl::StatusCode code, const char* field) {
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(field), std::string::npos) << s;
  };
  code_and_field(world.Raycast({{0, 0, -5}, {0, 0, 2}, 10, 1}, {}).status(),
                 absl::StatusCode::kInvalidArgument, "direction");
  code_and_field(world.Raycast({{0, 0, -5}, {0, 0, 1}, INFINITY, 1}, {}).status(),
                 absl::StatusCode::kInvalidArgument, "max_distance");
  code_and_field(world.Raycast({{0, 0, -5}, {0, 0, 1}, 0, 1}, {}).status(),
                 absl::StatusCode::kInvalidArgument, "max_distance");
  code_and_field(world.Raycast({{NAN, 0, -5}, {0, 0, 1}, 1, 1}, {}).status(),
                 absl::StatusCode::kInvalidArgument, "origin");
  code_and_field(world.Overlap({nullptr, {}}, 1, {}).status(), absl::StatusCode::kInvalidArgument,
                 "shape");
  code_and_field(world.PoseAt(5, 1).status(), absl::StatusCode::kNotFound, "id");
}

TEST(BodyWorld, HullPartsAreCopiedAndHit) {
  BodyWorld world;
  BodyBatch b = Tick(1);
  {
    std::vector<Vec3> points = {{-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {1, 1, -1},
                                {-1, -1, 1},  {1, -1, 1},  {-1, 1, 1},  {1, 1, 1}};
    BodyDesc d = Sphere(1, {0, 0, 0});
    d.parts = {{4, MakeConvexHull(points.data(), int(points.size())), {}}};
    b.create = {d};
    ASSERT_TRUE(world.Apply(b).ok());
    points.assign(points.size(), Vec3{100, 100, 100});  // the registry holds its own copy
  }
  absl::StatusOr<BodyRayHit> h = world.Raycast({{0, 0, -5}, {0, 0, 1}, 10, 1}, {});
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h->hit);
  EXPECT_EQ(h->part_id, 4u);
  EXPECT_NEAR(h->distance, 4, 1e-3f);
  EXPECT_NEAR(h->normal.z, -1, 1e-3f);
}

// PartsInBox at random ticks of the window: every part of every passing body whose own world box
// meets the query box is listed (the body box holds the part boxes), nothing else than parts of
// passing bodies that existed at the tick, posed as PoseAt * local, in body then part order.
TEST(BodyWorld, PartsInBoxListsEveryPartNearTheBoxInIdOrder) {
  BodyWorld world;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-20, 20), step(-0.5f, 0.5f);
  const std::vector<BodyPartDesc> parts = test::HumanoidParts();
  std::vector<Vec3> at(40);
  for (int64_t t = 1; t <= 30; ++t) {
    BodyBatch b = Tick(t);
    for (int i = 0; i < 40; ++i) {
      at[i] = t == 1 ? Vec3{u(rng), u(rng) * 0.1f, u(rng)} : at[i] + Vec3{step(rng), 0, step(rng)};
      const RigidTransform pose{test::RandomRotation(rng), at[i]};
      if (t == 1) {
        b.create.push_back({BodyId(500 - 7 * i), 0, uint32_t(1 + i % 2), pose, parts});
      } else {
        b.move.push_back({BodyId(500 - 7 * i), pose});
      }
    }
    ASSERT_TRUE(world.Apply(b).ok());
  }
  const BodyId ignored[] = {500, 493};
  int listed = 0, expected = 0;
  for (int q = 0; q < 300; ++q) {
    const int64_t tick = 1 + int64_t(rng() % 30);
    const Vec3 c{u(rng), u(rng) * 0.1f, u(rng)}, half{1 + step(rng), 1, 2 + step(rng)};
    const Aabb box{c - half, c + half};
    const BodyFilter filter{q % 2 ? 1u : ~0u,
                            q % 3 ? absl::Span<const BodyId>(ignored) : absl::Span<const BodyId>()};
    std::vector<PosedBodyPart> out;
    ASSERT_TRUE(world.PartsInBox(box, tick, filter, &out).ok());
    listed += int(out.size());
    for (size_t k = 1; k < out.size(); ++k) {
      EXPECT_TRUE(out[k - 1].body_id < out[k].body_id ||
                  (out[k - 1].body_id == out[k].body_id && out[k - 1].part_id < out[k].part_id));
    }
    for (int i = 0; i < 40; ++i) {
      const BodyId id = BodyId(500 - 7 * i);
      const bool passes = (uint32_t(1 + i % 2) & filter.layer_mask) != 0 &&
                          std::find(filter.ignore_ids.begin(), filter.ignore_ids.end(), id) ==
                              filter.ignore_ids.end();
      const RigidTransform pose = *world.PoseAt(id, tick);
      for (const BodyPartDesc& part : parts) {
        auto it = std::find_if(out.begin(), out.end(), [&](const PosedBodyPart& p) {
          return p.body_id == id && p.part_id == part.part_id;
        });
        if (!passes) {
          EXPECT_EQ(it, out.end()) << "body " << id << " does not pass the filter";
          continue;
        }
        const RigidTransform posed = pose * part.local;
        if (TransformBox(part.shape.LocalBounds(), posed).Overlaps(box)) {
          ++expected;
          EXPECT_NE(it, out.end()) << "body " << id << " part " << part.part_id << " tick " << tick;
        }
        if (it == out.end()) continue;
        EXPECT_EQ(std::memcmp(&it->pose, &posed, sizeof posed), 0);
        EXPECT_EQ(it->shape->type, part.shape.type);
      }
    }
  }
  std::printf("parts in box: %d listed, %d part boxes meeting the query boxes\n", listed, expected);
  EXPECT_GT(expected, 100);
}

}  // namespace
}  // namespace voxcol
