// MoveCharacters with bodies (issue 42): characters collide with each other and with the parts of
// a BodyWorld, the same whatever the order of the moves. Flat analytic ground at y = 0 built by
// edits, walls added by FillBlock. Distances are checked against closed forms in double precision
// (vertical segment to vertical segment, vertical segment to axis-aligned box), independent of the
// sweeps under test. Each test prints the figures it measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "core/bodies/body_world.h"
#include "core/query/character.h"
#include "core/voxel/edit_shapes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr float kRadius = 0.4f;
constexpr float kHalfHeight = 0.5f;
constexpr float kFoot = kRadius + kHalfHeight;
constexpr float kSkin = 0.02f;  // CharacterSettings' default skin width
// Float rounding of a position of magnitude <= 16 (2^-19 ~ 2e-6 per coordinate) and of the
// sweeps' distances: the contact gap may exceed the skin width by this much, never more.
constexpr double kRounding = 1e-5;
const Vec3 kFall(0, -0.05f, 0);  // per tick: keeps the characters on the ground

struct Scene {
  std::unique_ptr<World> world;
  std::unique_ptr<ChunkCollisionCache> cache;
  std::unique_ptr<BroadphaseIndex> index;

  void Edit(const std::function<absl::Status(ChunkEdit&)>& f) { ASSERT_TRUE(world->Edit(f).ok()); }
  void Block(const Vec3& center, const Vec3& size) {
    FillBlockParams p;
    p.center = center;
    p.size = size;
    Edit([&](ChunkEdit& e) { return FillBlock(e, p, EditLimits{}); });
  }
};

// A 64^3 world of unit voxels whose voxels in y -16..-1 are filled: the ground is y = 0.
std::unique_ptr<Scene> FlatScene() {
  auto s = std::make_unique<Scene>();
  s->world = testing::MakeEmptyWorld();
  s->cache = std::make_unique<ChunkCollisionCache>(*s->world, size_t(64) << 20);
  s->index = std::make_unique<BroadphaseIndex>(*s->world);
  s->world->AddObserver(s->index.get());
  FillRegionParams ground;
  ground.region = IntBox{{-32, -16, -32}, {32, 0, 32}};
  s->Edit([&](ChunkEdit& e) { return FillRegion(e, ground, EditLimits{}); });
  return s;
}

CharacterMove Move(BodyId id, const Vec3& position, const Vec3& displacement) {
  CharacterMove m;
  m.id = id;
  m.radius = kRadius;
  m.half_height = kHalfHeight;
  m.position = position;
  m.displacement = displacement;
  return m;
}

// Gap between two upright capsules of the test's size: the distance of their vertical core
// segments (closed form for parallel segments) minus the radii; negative when they overlap.
double CapsuleGap(const Vec3& a, const Vec3& b) {
  const double dx = double(a.x) - b.x, dz = double(a.z) - b.z;
  const double dy = std::max(0.0, std::fabs(double(a.y) - b.y) - 2.0 * kHalfHeight);
  return std::sqrt(dx * dx + dz * dz + dy * dy) - 2.0 * kRadius;
}

// Gap between the test's upright capsule at c and the box [lo, hi].
double CapsuleBoxGap(const Vec3& c, const Vec3& lo, const Vec3& hi) {
  auto outside = [](double v, double l, double h) { return std::max({l - v, v - h, 0.0}); };
  const double dx = outside(c.x, lo.x, hi.x), dz = outside(c.z, lo.z, hi.z);
  const double dy = std::max({double(lo.y) - (double(c.y) + kHalfHeight),
                              (double(c.y) - kHalfHeight) - double(hi.y), 0.0});
  return std::sqrt(dx * dx + dy * dy + dz * dz) - kRadius;
}

// One tick through ValidateCharacterMoves and MoveCharacters; every result OK.
std::vector<CharacterResult> Tick(Scene& s, const std::vector<CharacterMove>& moves,
                                  const CharacterBodies& bodies = {}) {
  const absl::Status valid = ValidateCharacterMoves(*s.world, moves, QueryLimits{}, bodies);
  EXPECT_TRUE(valid.ok()) << valid;
  std::vector<CharacterResult> results;
  MoveCharacters(*s.index, *s.cache, moves, bodies, nullptr, &results);
  for (const CharacterResult& r : results) EXPECT_TRUE(r.status.ok()) << r.status;
  return results;
}

// Two characters 8 apart walk head-on at 0.1 a tick for 100 ticks, once with the moves in id
// order and once reversed: they stop at contact (gap in [0, skin]), never overlap, and both runs
// give bit-identical positions at every tick.
TEST(CharacterCrowdTest, HeadOnPairStopsAtContactInAnyOrder) {
  auto s = FlatScene();
  const float y = kFoot + 0.01f;
  Vec3 run[2][2] = {{{-4, y, 0.3f}, {4, y, 0.3f}}, {{-4, y, 0.3f}, {4, y, 0.3f}}};
  double min_gap = 1e9;
  int differing = 0;
  for (int tick = 0; tick < 100; ++tick) {
    for (int reversed = 0; reversed < 2; ++reversed) {
      Vec3* p = run[reversed];
      std::vector<CharacterMove> moves = {Move(7, p[0], Vec3(0.1f, 0, 0) + kFall),
                                          Move(3, p[1], Vec3(-0.1f, 0, 0) + kFall)};
      if (reversed) std::reverse(moves.begin(), moves.end());
      const std::vector<CharacterResult> r = Tick(*s, moves);
      p[0] = r[reversed ? 1 : 0].position;
      p[1] = r[reversed ? 0 : 1].position;
    }
    differing += std::memcmp(run[0], run[1], sizeof run[0]) != 0;
    const double gap = CapsuleGap(run[0][0], run[0][1]);
    min_gap = std::min(min_gap, gap);
    EXPECT_GE(gap, 0.0) << "tick " << tick;
  }
  const double gap = CapsuleGap(run[0][0], run[0][1]);
  std::printf(
      "head-on: final x %.5f and %.5f, gap %.6f (skin %.3f), smallest gap %.6f, %d ticks "
      "differ between the orders\n",
      run[0][0].x, run[0][1].x, gap, kSkin, min_gap, differing);
  EXPECT_GE(gap, 0.0);
  EXPECT_LE(gap, kSkin + kRounding);
  EXPECT_EQ(differing, 0);
  EXPECT_GT(run[0][0].x, -1.0f);  // both walked most of the way (contact at 0.8 apart)
  EXPECT_LT(run[0][1].x, 1.0f);
}

// A character walks into a box body (a 2 x 2 x 2 crate on the ground) and stops at it; its own
// body (a capsule registered under the character's id, at its start) is no obstacle. With the
// crate's layer filtered out it walks through.
TEST(CharacterCrowdTest, WalksIntoABoxBodyAndStopsAtIt) {
  auto s = FlatScene();
  BodyWorld bodies;
  BodyBatch batch;
  batch.tick = 1;
  const Vec3 crate(3, 1, 0.5f);
  batch.create.push_back({100, 0, 2, {Quat(), crate}, {{1, MakeBox({1, 1, 1}), {}}}});
  const Vec3 start(-3, kFoot + 0.01f, 0);
  batch.create.push_back({5, 0, 1, {Quat(), start}, {{1, MakeCapsule(kHalfHeight, kRadius), {}}}});
  ASSERT_TRUE(bodies.Apply(batch).ok());
  const Vec3 lo = crate - Vec3(1, 1, 1), hi = crate + Vec3(1, 1, 1);
  for (uint32_t mask : {~0u, 1u}) {
    CharacterBodies with{&bodies, 1, BodyFilter{mask, {}}};
    Vec3 p = start;
    double min_gap = 1e9;
    for (int tick = 0; tick < 100; ++tick) {
      const std::vector<CharacterResult> r = Tick(*s, {Move(5, p, Vec3(0.1f, 0, 0) + kFall)}, with);
      EXPECT_FALSE(r[0].recovered) << "tick " << tick;  // its own body does not push it
      p = r[0].position;
      if (mask == ~0u) min_gap = std::min(min_gap, CapsuleBoxGap(p, lo, hi));
    }
    if (mask == 1u) {
      std::printf("crate filtered out: walked to x %.3f\n", p.x);
      EXPECT_GT(p.x, 6.5f);
      continue;
    }
    const double gap = CapsuleBoxGap(p, lo, hi);
    std::printf("crate: stopped at x %.5f, gap %.6f, smallest gap %.6f\n", p.x, gap, min_gap);
    EXPECT_GE(min_gap, 0.0);
    EXPECT_LE(gap, kSkin + kRounding);
  }
}

// 32 characters in a 16 x 16 pit walk in random directions (turning every 20 ticks) for 100 ticks.
// The moves go in a shuffled order every tick in one run and in a fixed order in the other: no two
// capsules overlap at any tick, and both runs are bit-identical.
TEST(CharacterCrowdTest, CrowdInAPitNeverOverlapsInAnyOrder) {
  auto s = FlatScene();
  for (float side : {-1.0f, 1.0f}) {
    s->Block({side * 9, 2, 0}, {2, 4, 20});  // walls x in [8, 10] and [-10, -8]
    s->Block({0, 2, side * 9}, {20, 4, 2});
  }
  constexpr int kCount = 32;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-7, 7), angle(0, 6.2831853f);
  std::vector<Vec3> start;
  while (int(start.size()) < kCount) {
    const Vec3 p(u(rng), kFoot + 0.01f, u(rng));
    bool free = true;
    for (const Vec3& q : start) free = free && CapsuleGap(p, q) > 0.1;
    if (free) start.push_back(p);
  }
  std::vector<BodyId> ids(kCount);
  for (int i = 0; i < kCount; ++i) ids[i] = 1000 + 37 * ((i * 13) % kCount);  // unique, shuffled
  std::vector<float> heading(kCount);
  std::vector<Vec3> run[2] = {start, start};
  std::mt19937 shuffle_rng(7);
  int differing = 0, close_pairs = 0;
  double min_gap = 1e9;
  for (int tick = 0; tick < 100; ++tick) {
    if (tick % 20 == 0) {
      for (float& h : heading) h = angle(rng);
    }
    for (int shuffled = 0; shuffled < 2; ++shuffled) {
      std::vector<int> order(kCount);
      for (int i = 0; i < kCount; ++i) order[i] = i;
      if (shuffled) std::shuffle(order.begin(), order.end(), shuffle_rng);
      std::vector<CharacterMove> moves;
      for (int i : order) {
        const Vec3 walk(0.12f * std::cos(heading[i]), 0, 0.12f * std::sin(heading[i]));
        moves.push_back(Move(ids[i], run[shuffled][i], walk + kFall));
      }
      const std::vector<CharacterResult> r = Tick(*s, moves);
      for (int k = 0; k < kCount; ++k) run[shuffled][order[k]] = r[k].position;
    }
    differing += std::memcmp(run[0].data(), run[1].data(), sizeof(Vec3) * kCount) != 0;
    for (int i = 0; i < kCount; ++i) {
      for (int j = i + 1; j < kCount; ++j) {
        const double gap = CapsuleGap(run[0][i], run[0][j]);
        min_gap = std::min(min_gap, gap);
        close_pairs += gap <= kSkin + kRounding;
        EXPECT_GE(gap, 0.0) << "tick " << tick << " characters " << i << " and " << j;
      }
    }
  }
  std::printf(
      "crowd: smallest gap %.6f, %d pair-ticks in contact, %d ticks differ between the "
      "orders\n",
      min_gap, close_pairs, differing);
  EXPECT_EQ(differing, 0);
  EXPECT_GT(close_pairs, 20);  // the crowd does meet
}

// Alone and without bodies, a character moves exactly as MoveCharacter moves it.
TEST(CharacterCrowdTest, AloneWithoutBodiesEqualsMoveCharacter) {
  auto s = FlatScene();
  s->Block({6, 0.2f, 0}, {2, 0.4f, 8});  // a riser to step onto in lane z = 0
  s->Block({0, 1, 12}, {2, 2, 4});       // a wall to slide along in lane z = 12
  std::vector<CharacterMove> moves;      // one lane each, 6 apart: no character meets another
  for (int i = 0; i < 9; ++i) {
    const float a = 0.05f * float(i - 4);
    moves.push_back(Move(BodyId(20 - i), {-4, kFoot + 0.3f, -24.0f + 6 * float(i)},
                         {0.3f * std::cos(a), -0.2f, 0.3f * std::sin(a)}));
  }
  int differing = 0;
  for (int tick = 0; tick < 30; ++tick) {
    const std::vector<CharacterResult> together = Tick(*s, moves);
    for (size_t i = 0; i < moves.size(); ++i) {
      CharacterResult alone;
      MoveCharacter(*s->index, *s->cache, moves[i], nullptr, &alone);
      differing += std::memcmp(&alone.position, &together[i].position, sizeof(Vec3)) != 0 ||
                   alone.ground != together[i].ground || alone.collisions != together[i].collisions;
      moves[i].position = together[i].position;
    }
  }
  std::printf("alone: %d of %zu moves differ from MoveCharacter\n", differing, 30 * moves.size());
  EXPECT_EQ(differing, 0);
}

// Three characters spawned into each other (two at the same spot, one 0.3 away) and one into a
// crate body are pushed apart by the recovery in one tick: no overlap afterwards (the recovery
// leaves a skin width), in any order.
TEST(CharacterCrowdTest, OverlappingStartsArePushedApartInAnyOrder) {
  auto s = FlatScene();
  BodyWorld bodies;
  BodyBatch batch;
  batch.tick = 1;
  const Vec3 crate(6, 1, 0);
  batch.create.push_back({100, 0, 1, {Quat(), crate}, {{1, MakeBox({1, 1, 1}), {}}}});
  ASSERT_TRUE(bodies.Apply(batch).ok());
  const CharacterBodies with{&bodies, 1, {}};
  const float y = kFoot + 0.01f;
  const std::vector<CharacterMove> moves = {Move(2, {0, y, 0}, kFall), Move(1, {0, y, 0}, kFall),
                                            Move(3, {0.3f, y, 0.1f}, kFall),
                                            Move(4, {4.8f, y, 0}, kFall)};
  std::vector<CharacterMove> reversed(moves.rbegin(), moves.rend());
  const std::vector<CharacterResult> a = Tick(*s, moves, with), b = Tick(*s, reversed, with);
  double min_gap = 1e9;
  int differing = 0;
  for (size_t i = 0; i < moves.size(); ++i) {
    const CharacterResult& ra = a[i];
    const CharacterResult& rb = b[moves.size() - 1 - i];
    differing += std::memcmp(&ra.position, &rb.position, sizeof(Vec3)) != 0;
    // Ids 1 and 2 start inside others and 4 inside the crate; 3 may find itself clear once 1 and
    // 2, resolved before it, have been pushed out of it.
    if (i != 2) {
      EXPECT_TRUE(ra.recovered) << "move " << i;
    }
    for (size_t j = i + 1; j < 3; ++j)
      min_gap = std::min(min_gap, CapsuleGap(a[i].position, a[j].position));
  }
  const double crate_gap =
      CapsuleBoxGap(a[3].position, crate - Vec3(1, 1, 1), crate + Vec3(1, 1, 1));
  std::printf(
      "spawned into each other: smallest gap after one tick %.6f, to the crate %.6f, %d "
      "positions differ between the orders\n",
      min_gap, crate_gap, differing);
  EXPECT_GE(min_gap, 0.0);
  EXPECT_GE(crate_gap, 0.0);
  EXPECT_EQ(differing, 0);
}

// A character dropped onto a crate body stands on it (on_obstacle, walkable, the gap to the crate
// at most the skin) and stays; another walks into a crate 0.4 high (step offset 0.5) and steps
// onto it as onto a terrain riser.
TEST(CharacterCrowdTest, StandsOnACrateAndStepsOntoALowOne) {
  auto s = FlatScene();
  BodyWorld bodies;
  BodyBatch batch;
  batch.tick = 1;
  batch.create.push_back({100, 0, 1, {Quat(), {0, 1, 0}}, {{1, MakeBox({1, 1, 1}), {}}}});
  batch.create.push_back({101, 0, 1, {Quat(), {0, 0.2f, 10}}, {{1, MakeBox({1, 0.2f, 1}), {}}}});
  ASSERT_TRUE(bodies.Apply(batch).ok());
  const CharacterBodies with{&bodies, 1, {}};
  Vec3 dropped(0.3f, 2 + kFoot + 1.5f, 0.2f), walker(-3, kFoot + 0.01f, 10);
  CharacterResult on_crate, stepper;
  int stepped = 0;
  for (int tick = 0; tick < 60; ++tick) {
    const std::vector<CharacterResult> r = Tick(
        *s, {Move(1, dropped, {0, -0.3f, 0}), Move(2, walker, Vec3(0.1f, 0, 0) + kFall)}, with);
    on_crate = r[0];
    stepper = r[1];
    dropped = on_crate.position;
    walker = stepper.position;
    stepped += stepper.stepped;
  }
  const double gap = CapsuleBoxGap(dropped, {-1, 0, -1}, {1, 2, 1});
  std::printf(
      "on a crate: ground %d on_obstacle %d normal y %.5f gap %.6f; low crate: x %.3f "
      "bottom y %.4f, %d stepped ticks\n",
      int(on_crate.ground), int(on_crate.on_obstacle), on_crate.ground_normal.y, gap, walker.x,
      walker.y - kFoot, stepped);
  EXPECT_EQ(on_crate.ground, GroundState::kOnGround);
  EXPECT_TRUE(on_crate.on_obstacle);
  EXPECT_EQ(on_crate.ground_material, 0);
  EXPECT_GT(on_crate.ground_normal.y, 0.999f);
  EXPECT_GE(gap, 0.0);
  EXPECT_LE(gap, kSkin + kRounding);
  EXPECT_GE(stepped, 1);
  EXPECT_GT(walker.x, 0.0f);  // on the low crate (x in [-1, 1]) or past it
  EXPECT_EQ(stepper.ground, GroundState::kOnGround);
}

TEST(CharacterCrowdTest, ValidationNamesTheField) {
  auto s = FlatScene();
  const Vec3 y(0, kFoot + 0.01f, 0);
  std::vector<CharacterMove> moves = {Move(4, y, {}), Move(9, y + Vec3(3, 0, 0), {}),
                                      Move(4, y + Vec3(6, 0, 0), {})};
  absl::Status st = ValidateCharacterMoves(*s->world, moves, QueryLimits{}, {});
  EXPECT_TRUE(absl::StartsWith(st.message(), "moves[2].id: character 4 is also moves[0]")) << st;
  moves[2].id = 5;
  moves[1].radius = -1;
  st = ValidateCharacterMoves(*s->world, moves, QueryLimits{}, {});
  EXPECT_TRUE(absl::StartsWith(st.message(), "moves[1].shape.capsule.radius")) << st;
  moves[1].radius = kRadius;
  EXPECT_TRUE(ValidateCharacterMoves(*s->world, moves, QueryLimits{}, {}).ok());
  BodyWorld bodies;
  BodyBatch batch;
  batch.tick = 10;
  ASSERT_TRUE(bodies.Apply(batch).ok());
  st = ValidateCharacterMoves(*s->world, moves, QueryLimits{}, {&bodies, 11, {}});
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(absl::StartsWith(st.message(), "bodies.tick: 11 is newer")) << st;
}

}  // namespace
}  // namespace voxcol
