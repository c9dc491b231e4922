// MoveCharacter scenarios in analytic worlds built by edits: ground at y = 0 (FillRegion), with
// walls, stairs, wedge slopes, overhangs and corridors added by FillBlock / FillWedge. Each test
// prints the figures it measures.
#include "core/query/character.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "core/query/overlap.h"
#include "core/voxel/edit_shapes.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

constexpr float kPi = 3.14159265f;
constexpr float kGround = 0.0f;  // world Y of the flat ground's surface
constexpr float kRadius = 1.0f;
constexpr float kHalfHeight = 1.0f;
constexpr float kFoot = kRadius + kHalfHeight;  // centre height above the capsule's bottom

struct Scene {
  std::unique_ptr<World> world;
  std::unique_ptr<ChunkCollisionCache> cache;
  std::unique_ptr<BroadphaseIndex> index;

  void Edit(const std::function<absl::Status(ChunkEdit&)>& f) { ASSERT_TRUE(world->Edit(f).ok()); }
  void Block(const Vec3& center, const Vec3& size, EditMode mode = EditMode::kAdd) {
    FillBlockParams p;
    p.center = center;
    p.size = size;
    p.mode = mode;
    Edit([&](ChunkEdit& e) { return FillBlock(e, p, EditLimits{}); });
  }
  bool Penetrates(const Vec3& centre) {
    const ConvexShape capsule = MakeCapsule(kHalfHeight, kRadius);
    OverlapResult r;
    Overlap(*index, *cache, PosedShape{&capsule, RigidTransform{Quat(), centre}}, {}, &r);
    EXPECT_TRUE(r.load_status.ok());
    return r.touches_solid;
  }
};

// An empty 64^3 world (voxels -32..31 on each axis) whose voxels in y -16..-1 are filled (edits
// keep the index current).
std::unique_ptr<Scene> FlatScene() {
  auto s = std::make_unique<Scene>();
  s->world = testing::MakeEmptyWorld();
  s->cache = std::make_unique<ChunkCollisionCache>(*s->world, size_t(64) << 20);
  s->index = std::make_unique<BroadphaseIndex>(*s->world);
  s->world->AddObserver(s->index.get());
  FillRegionParams ground;
  ground.region = IntBox{{-32, -16, -32}, {32, int32_t(kGround), 32}};
  s->Edit([&](ChunkEdit& e) { return FillRegion(e, ground, EditLimits{}); });
  return s;
}

CharacterMove Move(const Vec3& position, const Vec3& displacement) {
  CharacterMove m;
  m.radius = kRadius;
  m.half_height = kHalfHeight;
  m.position = position;
  m.displacement = displacement;
  m.settings.step_offset = 1.6f;
  m.settings.snap_distance = 1.0f;
  m.settings.slope_limit_degrees = 45;
  return m;
}

// One tick: validates and moves; the result's status must be OK.
CharacterResult Tick(Scene& s, const Vec3& position, const Vec3& displacement) {
  const CharacterMove m = Move(position, displacement);
  const absl::Status valid = ValidateCharacterMove(*s.world, m, QueryLimits{});
  EXPECT_TRUE(valid.ok()) << valid;
  CharacterResult r;
  MoveCharacter(*s.index, *s.cache, m, nullptr, &r);
  EXPECT_TRUE(r.status.ok()) << r.status;
  return r;
}

const Vec3 kGravity(0, -0.3f, 0);  // per tick

// 1. Falling onto flat ground lands on it (bottom within the skin of y = 0) and then 100 idle ticks
// under gravity move the centre by at most 1e-4 voxel.
TEST(CharacterTest, FallingOntoGroundSnapsAndStaysStill) {
  auto s = FlatScene();
  Vec3 p(0, kGround + kFoot + 3.1f, 0);
  int ticks = 0;
  CharacterResult r;
  for (; ticks < 40; ++ticks) {
    r = Tick(*s, p, kGravity);
    p = r.position;
    if (r.ground == GroundState::kOnGround) break;
  }
  ASSERT_EQ(r.ground, GroundState::kOnGround);
  const float gap = p.y - kFoot - kGround;
  const Vec3 landed = p;
  float drift = 0;
  for (int i = 0; i < 100; ++i) {
    r = Tick(*s, p, kGravity);
    p = r.position;
    drift = std::max(drift, Length(p - landed));
    EXPECT_EQ(r.ground, GroundState::kOnGround);
    EXPECT_TRUE(r.collisions & kCollisionDown);
  }
  std::printf(
      "fall: landed after %d ticks, gap to ground %.5f, max drift over 100 idle ticks %.2e, "
      "ground normal y %.5f\n",
      ticks + 1, gap, drift, r.ground_normal.y);
  EXPECT_GE(gap, 0.0f);
  EXPECT_LE(gap, 0.03f);
  EXPECT_LE(drift, 1e-4f);
  EXPECT_GT(r.ground_normal.y, 0.999f);
  EXPECT_EQ(r.ground_material, kMaterialRock);
}

// 2. Walking into a wall (plane x = 8) at 45 degrees keeps the tangential (Z) component of the
// motion within 5% while touching it, and never passes the wall.
TEST(CharacterTest, WallAt45DegreesKeepsTheTangentialMotion) {
  auto s = FlatScene();
  s->Block({16, 8, 0}, {16, 24, 60});  // x in [8, 24]
  Vec3 p(4, kGround + kFoot + 0.02f, -22);
  const float step = 0.25f;
  const Vec3 walk(step * std::sqrt(0.5f), 0, step * std::sqrt(0.5f));
  int touching = 0;
  float tangential = 0, max_x = 0;
  for (int i = 0; i < 60; ++i) {
    CharacterResult r = Tick(*s, p, walk + kGravity);
    if (r.collisions & kCollisionSides) {
      ++touching;
      tangential += r.position.z - p.z;
    }
    p = r.position;
    max_x = std::max(max_x, p.x);
  }
  const float ratio = tangential / (touching * walk.z);
  std::printf(
      "wall at 45 deg: %d ticks touching, tangential kept %.4f of wanted, max x %.4f "
      "(wall at %.1f)\n",
      touching, ratio, max_x + kRadius, 8.0f);
  EXPECT_GE(touching, 40);
  EXPECT_GE(ratio, 0.95f);
  EXPECT_LE(ratio, 1.05f);
  EXPECT_LE(max_x + kRadius, 8.0f);
}

// Four steps of height `riser` up along +X: step k covers x >= 4 + 3 (k - 1), top at k * riser.
std::unique_ptr<Scene> StairScene(float riser) {
  auto s = FlatScene();
  for (int k = 1; k <= 4; ++k) {
    const float x0 = 4 + 3 * (k - 1), top = k * riser;
    s->Block({(x0 + 30) / 2, (top - 1) / 2, 0}, {30 - x0, top + 1, 12});
  }
  return s;
}

// Walks +X for 120 ticks of 0.25 from x = -4; returns the final centre.
Vec3 WalkStairs(Scene& s, int* stepped_ticks) {
  Vec3 p(-4, kGround + kFoot + 0.02f, 0);
  *stepped_ticks = 0;
  for (int i = 0; i < 120; ++i) {
    CharacterResult r = Tick(s, p, Vec3(0.25f, 0, 0) + kGravity);
    *stepped_ticks += r.stepped;
    p = r.position;
  }
  return p;
}

// 3. Risers of 1.0 and 1.5 (step offset 1.6) are climbed to the top tread (y = 4 * riser); a riser
// of 2.5 blocks at the first step's face (x = 4).
TEST(CharacterTest, StairsUpToTheStepOffsetAreClimbed) {
  for (float riser : {1.0f, 1.5f, 2.5f}) {
    auto s = StairScene(riser);
    int stepped = 0;
    const Vec3 p = WalkStairs(*s, &stepped);
    const float bottom = p.y - kFoot;
    std::printf(
        "stairs riser %.1f (step offset 1.6): final x %.3f, bottom y %.4f (top tread %.1f), "
        "%d stepped ticks\n",
        riser, p.x, bottom, 4 * riser, stepped);
    if (riser <= 1.6f) {
      EXPECT_GT(p.x, 15.0f);
      EXPECT_NEAR(bottom, 4 * riser, 0.05f);
      EXPECT_GE(stepped, 4);
    } else {
      EXPECT_LE(p.x + kRadius, 4.0f);
      EXPECT_GT(p.x + kRadius, 3.9f);
      EXPECT_NEAR(bottom, 0.0f, 0.05f);
    }
  }
}

// 3b. One move never rises more than the step offset: from standing on the ground at several
// distances before a single riser a little higher than the step offset (its rounded edge can carry
// a sliding capsule up), one tick of each length toward it ends at most 1.6 above the start.
TEST(CharacterTest, OneMoveRisesAtMostTheStepOffset) {
  int moves = 0, stepped = 0;
  float highest = 0;
  for (float riser : {1.7f, 1.8f, 2.0f, 2.2f}) {
    auto s = FlatScene();
    s->Block({17, (riser - 1) / 2, 0}, {26, riser + 1, 12});  // face at x = 4, top at riser
    for (float gap : {0.05f, 0.3f, 0.7f}) {
      const Vec3 p(4 - kRadius - gap, kGround + kFoot + 0.02f, 0);
      for (float length : {0.5f, 1.0f, 2.0f, 3.0f}) {
        CharacterResult r = Tick(*s, p, Vec3(length, -0.3f, 0));
        ++moves;
        stepped += r.stepped;
        highest = std::max(highest, r.position.y - p.y);
        EXPECT_LE(r.position.y - p.y, 1.6f + 1e-3f)
            << "riser " << riser << " gap " << gap << " length " << length;
      }
    }
  }
  std::printf("%d moves toward risers 1.7-2.2: %d stepped, highest rise %.4f (step offset 1.6)\n",
              moves, stepped, highest);
}

// A wedge ramp rising along +Z at `degrees` from z = -4, 12 wide in X, `length` deep.
std::unique_ptr<Scene> RampScene(float degrees, float length) {
  auto s = FlatScene();
  FillWedgeParams w;
  const float height = length * std::tan(degrees * kPi / 180);
  w.center = {0, height / 2, -4 + length / 2};
  w.size = {12, height, length};
  s->Edit([&](ChunkEdit& e) { return FillWedge(e, w, EditLimits{}); });
  return s;
}

// 4. A 30-degree ramp (limit 45) is walked up resting on the slope plane (centre height
// R / cos 30 + H above it); a 60-degree one is not climbed.
TEST(CharacterTest, SlopesBelowTheLimitAreWalkableAboveAreNot) {
  for (float degrees : {30.0f, 60.0f}) {
    auto s = RampScene(degrees, degrees < 45 ? 16.0f : 8.0f);
    Vec3 p(0, kGround + kFoot + 0.02f, -9);
    float max_rise = 0;
    CharacterResult r;
    for (int i = 0; i < 48; ++i) {
      r = Tick(*s, p, Vec3(0, 0, 0.25f) + kGravity);
      p = r.position;
      max_rise = std::max(max_rise, p.y - kGround - kFoot);
    }
    const float t = std::tan(degrees * kPi / 180);
    const float rest = (p.z + 4) * t + kRadius / std::cos(degrees * kPi / 180) + kHalfHeight;
    std::printf(
        "ramp %.0f deg: final z %.3f, centre y %.4f (resting on the plane: %.4f), max rise "
        "%.4f, ground %d normal y %.4f\n",
        degrees, p.z, p.y, rest, max_rise, int(r.ground), r.ground_normal.y);
    if (degrees < 45) {
      EXPECT_GT(p.z, 0.0f);
      EXPECT_NEAR(p.y, rest, 0.1f);
      EXPECT_EQ(r.ground, GroundState::kOnGround);
    } else {
      EXPECT_LE(max_rise, 0.5f);
      EXPECT_LT(p.z, -4.0f);
    }
  }
}

// 4. Released above a 60-degree slope, the character slides down it (reported on a steep slope
// meanwhile) and comes to rest on the flat ground at its foot.
TEST(CharacterTest, SteepSlopeSlidesDown) {
  auto s = RampScene(60, 8);
  const float t = std::tan(60 * kPi / 180);
  Vec3 p(0, 4 * t + 4.0f, 0);  // over the slope's middle (z = 0, surface y = 4 tan 60)
  const Vec3 start = p;
  int steep_ticks = 0;
  CharacterResult r;
  for (int i = 0; i < 120; ++i) {
    r = Tick(*s, p, kGravity);
    steep_ticks += r.ground == GroundState::kOnSteepSlope;
    p = r.position;
  }
  std::printf(
      "steep slope slide: from y %.3f z %.3f to y %.4f z %.3f, %d ticks on the steep "
      "slope, final ground %d\n",
      start.y, start.z, p.y, p.z, steep_ticks, int(r.ground));
  EXPECT_GE(steep_ticks, 5);
  EXPECT_EQ(r.ground, GroundState::kOnGround);
  // At the foot: the concave corner of slope and ground is rounded over about one voxel.
  EXPECT_GE(p.y - kFoot, kGround);
  EXPECT_LE(p.y - kFoot, kGround + 0.5f);
  EXPECT_LT(p.z, -4.0f);
}

// Lets the character fall onto the flat ground at (x, z) and returns its resting centre.
Vec3 Land(Scene& s, float x, float z) {
  Vec3 p(x, kGround + kFoot + 1.0f, z);
  for (int i = 0; i < 20; ++i) p = Tick(s, p, kGravity).position;
  return p;
}

// 5. Edits around a standing character: ground raised by 2 under it, then a block burying it
// whole (both voxel-aligned); each time the next move recovers it outside the terrain (Overlap no
// longer reports a penetration) and on top. Then the ground under it is dug away and it falls.
TEST(CharacterTest, RecoversFromEditsAndFallsWhenDugOut) {
  auto s = FlatScene();
  Vec3 p = Land(*s, 0, 0);
  s->Block({0, 1, 0}, {6, 2, 6});  // top at y = 2
  ASSERT_TRUE(s->Penetrates(p));
  CharacterResult r = Tick(*s, p, kGravity);
  std::printf("raised ground: recovered %d, bottom %.4f -> %.4f (new top 2), penetrates %d\n",
              r.recovered, p.y - kFoot, r.position.y - kFoot, s->Penetrates(r.position));
  EXPECT_TRUE(r.recovered);
  EXPECT_FALSE(s->Penetrates(r.position));
  EXPECT_NEAR(r.position.y - kFoot, 2.0f, 0.05f);
  EXPECT_EQ(r.ground, GroundState::kOnGround);
  p = r.position;

  s->Block({0, 5, 0}, {12, 6, 12});  // y in [2, 8]: the capsule is inside
  ASSERT_TRUE(s->Penetrates(p));
  r = Tick(*s, p, kGravity);
  std::printf(
      "buried: recovered %d, centre (%.3f, %.3f, %.3f) -> (%.3f, %.4f, %.3f), bottom %.4f "
      "(block top 8), penetrates %d\n",
      r.recovered, p.x, p.y, p.z, r.position.x, r.position.y, r.position.z, r.position.y - kFoot,
      s->Penetrates(r.position));
  EXPECT_TRUE(r.recovered);
  EXPECT_FALSE(s->Penetrates(r.position));
  EXPECT_GE(r.position.y - kFoot, 8.0f - 0.05f);
  p = r.position;
  for (int i = 0; i < 3; ++i) p = Tick(*s, p, kGravity).position;

  ClearParams dig;
  dig.region = IntBox{{-7, -16, -7}, {7, 9, 7}};
  s->Edit([&](ChunkEdit& e) { return Clear(e, dig, EditLimits{}); });
  const float before = p.y;
  int airborne = 0;
  for (int i = 0; i < 5; ++i) {
    r = Tick(*s, p, kGravity);
    airborne += r.ground == GroundState::kAirborne;
    p = r.position;
  }
  std::printf("dug out: fell %.4f in 5 ticks of gravity 0.3 (%d airborne)\n", before - p.y,
              airborne);
  EXPECT_NEAR(before - p.y, 1.5f, 1e-4f);  // 5 x 0.3
  EXPECT_EQ(airborne, 5);
}

// 6. Eight characters walking on the stairs (riser 1.5) and a ramp for 80 ticks through
// MoveCharacters, in two fresh worlds: every position is bit-identical.
std::vector<Vec3> ScriptedRun() {
  auto s = StairScene(1.5f);
  FillWedgeParams w;
  w.center = {-14, 3, 0};
  w.size = {8, 6, 12};
  s->Edit([&](ChunkEdit& e) { return FillWedge(e, w, EditLimits{}); });
  std::vector<CharacterMove> moves;
  for (int i = 0; i < 8; ++i) {
    const float a = 0.3f + 0.7f * i;
    moves.push_back(Move(Vec3(-8 + i, kGround + kFoot + 0.5f, -5 + 1.3f * i),
                         Vec3(0.25f * std::cos(a), kGravity.y, 0.25f * std::sin(a))));
  }
  std::vector<Vec3> trace;
  std::vector<CharacterResult> results;
  for (int t = 0; t < 80; ++t) {
    MoveCharacters(*s->index, *s->cache, moves, nullptr, &results);
    for (size_t i = 0; i < moves.size(); ++i) {
      EXPECT_TRUE(results[i].status.ok());
      moves[i].position = results[i].position;
      trace.push_back(results[i].position);
    }
  }
  return trace;
}

TEST(CharacterTest, SameInputsGiveBitIdenticalPositions) {
  const std::vector<Vec3> a = ScriptedRun(), b = ScriptedRun();
  ASSERT_EQ(a.size(), b.size());
  int differing = 0;
  float travelled = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    differing += std::memcmp(&a[i], &b[i], sizeof(Vec3)) != 0;
    if (i >= 8) travelled += Length(a[i] - a[i - 8]);
  }
  std::printf("determinism: %zu positions, %d differ bitwise, %.2f travelled in all\n", a.size(),
              differing, travelled);
  EXPECT_EQ(differing, 0);
  EXPECT_GT(travelled, 100.0f);
}

// 7. A low overhang (underside at y = 4.3, the capsule's top at 4.02) is walked under at full
// speed without the step, although the step offset (1.6) would hit it.
TEST(CharacterTest, LowOverhangTheCapsuleClearsIsPassable) {
  auto s = FlatScene();
  s->Block({8, 5.3f, 0}, {8, 2, 12});  // x in [4, 12], y in [4.3, 6.3]
  Vec3 p(-4, kGround + kFoot + 0.02f, 0);
  float min_step = 1;
  int stepped = 0;
  for (int i = 0; i < 60; ++i) {
    CharacterResult r = Tick(*s, p, Vec3(0.25f, 0, 0) + kGravity);
    min_step = std::min(min_step, r.position.x - p.x);
    stepped += r.stepped;
    p = r.position;
  }
  std::printf(
      "low overhang: final x %.3f (overhang x 4..12), least progress per tick %.5f of "
      "0.25, %d stepped ticks\n",
      p.x, min_step, stepped);
  EXPECT_NEAR(p.x, 11.0f, 1e-3f);
  EXPECT_GE(min_step, 0.2499f);
  EXPECT_EQ(stepped, 0);
}

// 7. A corridor exactly as wide as the capsule (walls at x = -1 and x = 1) is walked at full speed
// with no sideways motion.
TEST(CharacterTest, CorridorAsWideAsTheCapsuleIsWalkableWithoutJitter) {
  auto s = FlatScene();
  s->Block({-5, 3, 0}, {8, 8, 40});  // x in [-9, -1]
  s->Block({5, 3, 0}, {8, 8, 40});   // x in [1, 9]
  Vec3 p(0, kGround + kFoot + 0.02f, -14);
  const Vec3 start = p;
  float max_dx = 0, max_dy = 0;
  for (int i = 0; i < 80; ++i) {
    CharacterResult r = Tick(*s, p, Vec3(0, 0, 0.25f) + kGravity);
    max_dx = std::max(max_dx, std::fabs(r.position.x - p.x));
    max_dy = std::max(max_dy, std::fabs(r.position.y - p.y));
    p = r.position;
  }
  const float progress = (p.z - start.z) / (80 * 0.25f);
  std::printf(
      "corridor 2R wide: progress %.4f of wanted, max |dx| per tick %.2e, max |dy| per "
      "tick %.2e, final x %.2e\n",
      progress, max_dx, max_dy, p.x);
  EXPECT_GE(progress, 0.95f);
  EXPECT_LE(max_dx, 1e-4f);
  EXPECT_LE(max_dy, 1e-4f);
}

// Volume of the upright capsule (centre height c) below height w, in closed form.
float CapsuleVolumeBelow(float c, float w) {
  auto cap =
      [](float h) {  // volume of a unit-radius ball below height h in [-1, 1] from its centre
        h = std::clamp(h, -1.0f, 1.0f);
        return kPi * (h + 1) * (h + 1) * (2 - h) / 3;
      };
  const float R = kRadius, H = kHalfHeight;
  const float lower = R * R * R * cap(std::min((w - (c - H)) / R, 0.0f));
  const float cylinder = kPi * R * R * std::clamp(w - (c - H), 0.0f, 2 * H);
  const float upper = R * R * R * (cap(std::max((w - (c + H)) / R, 0.0f)) - cap(0));
  return lower + cylinder + upper;
}

// The water state: standing in water 3 deep the character swims (threshold 0.5), in water 1 deep
// it does not; the fraction matches the closed form.
TEST(CharacterTest, WaterStateFollowsTheSubmergedFraction) {
  for (int depth : {3, 1}) {
    auto s = FlatScene();
    FillRegionParams pool;
    pool.region = IntBox{{-8, 0, -8}, {8, depth, 8}};
    pool.material = kMaterialWater;
    s->Edit([&](ChunkEdit& e) { return FillRegion(e, pool, EditLimits{}); });
    const Vec3 p = Land(*s, 0, 0);
    const CharacterResult r = Tick(*s, p, kGravity);
    const float total = CapsuleVolumeBelow(0, 10);
    const float expected = CapsuleVolumeBelow(r.position.y, float(depth)) / total;
    std::printf("water %d deep: bottom %.4f, submerged %.4f (closed form %.4f), swimming %d\n",
                depth, r.position.y - kFoot, r.submerged_fraction, expected, r.swimming);
    EXPECT_NEAR(r.position.y - kFoot, kGround + 0.02f, 1e-3f);
    EXPECT_NEAR(r.submerged_fraction, expected, 0.006f);  // measured 0.0018: 12 x 12 lines
    EXPECT_EQ(r.swimming, depth == 3);
    EXPECT_EQ(r.ground, GroundState::kOnGround);
  }
}

// Collision flags and materials: a jump into a dirt ceiling (y = 6) stops under it with the up
// flag; walking into a sand wall (x = 4) sets the side flag; touched materials are rock (ground),
// dirt and sand, ascending.
TEST(CharacterTest, FlagsAndTouchedMaterials) {
  auto s = FlatScene();
  // A wall of a game's own material, numbered past the first 64 of the touched-material set.
  constexpr uint8_t kWallMaterial = 200;
  FillBlockParams wall;
  wall.center = {8, 4, 0};
  wall.size = {8, 8, 12};
  wall.material = kWallMaterial;
  s->Edit([&](ChunkEdit& e) { return FillBlock(e, wall, EditLimits{}); });
  FillBlockParams ceiling = wall;
  ceiling.center = {-2, 7, 0};
  ceiling.size = {12, 2, 12};
  ceiling.material = kMaterialDirt;
  s->Edit([&](ChunkEdit& e) { return FillBlock(e, ceiling, EditLimits{}); });
  Vec3 p = Land(*s, 0, 0);
  CharacterResult jump = Tick(*s, p, Vec3(0, 3, 0));
  std::printf("jump 3 under a ceiling at 6: top %.4f, flags %d\n", jump.position.y + kFoot,
              jump.collisions);
  EXPECT_TRUE(jump.collisions & kCollisionUp);
  EXPECT_NEAR(jump.position.y + kFoot, 6.0f - 0.02f, 1e-3f);
  EXPECT_EQ(jump.ground, GroundState::kAirborne);
  for (int i = 0; i < 10; ++i) p = Tick(*s, jump.position, kGravity).position;
  CharacterResult r;
  for (int i = 0; i < 16; ++i) {
    r = Tick(*s, p, Vec3(0.25f, 0, 0) + kGravity);
    p = r.position;
  }
  std::printf("wall: x %.4f, flags %d, touched", p.x + kRadius, r.collisions);
  for (uint8_t m : r.touched_materials) std::printf(" %d", m);
  std::printf(", ground material %d\n", r.ground_material);
  EXPECT_EQ(r.collisions, kCollisionSides | kCollisionDown);
  EXPECT_EQ(r.touched_materials, (std::vector<uint8_t>{kMaterialRock, kWallMaterial}));
  EXPECT_EQ(r.ground_material, kMaterialRock);
  std::vector<uint8_t> jumped = jump.touched_materials;
  EXPECT_EQ(jumped, (std::vector<uint8_t>{kMaterialDirt}));
}

// Invalid moves are rejected with INVALID_ARGUMENT naming the field.
TEST(CharacterTest, ValidationNamesTheField) {
  auto s = FlatScene();
  struct Case {
    const char* field;
    void (*spoil)(CharacterMove*);
  };
  const Case cases[] = {
      {"m.shape.capsule.radius", [](CharacterMove* m) { m->radius = 0; }},
      {"m.position", [](CharacterMove* m) { m->position.x = 100; }},
      {"m.displacement", [](CharacterMove* m) { m->displacement.y = std::nanf(""); }},
      {"m.settings.slope_limit_degrees",
       [](CharacterMove* m) { m->settings.slope_limit_degrees = 90; }},
      {"m.settings.max_slide_iterations",
       [](CharacterMove* m) { m->settings.max_slide_iterations = 0; }},
      {"m.settings.skin_width", [](CharacterMove* m) { m->settings.skin_width = 0; }},
      {"m.settings.swim_threshold", [](CharacterMove* m) { m->settings.swim_threshold = 1.5f; }},
  };
  CharacterMove good = Move(Vec3(0, 3, 0), kGravity);
  EXPECT_TRUE(ValidateCharacterMove(*s->world, good, QueryLimits{}, "m.").ok());
  for (const Case& c : cases) {
    CharacterMove m = good;
    c.spoil(&m);
    const absl::Status st = ValidateCharacterMove(*s->world, m, QueryLimits{}, "m.");
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StartsWith(st.message(), c.field)) << st.message();
  }
}

}  // namespace
}  // namespace voxcol
