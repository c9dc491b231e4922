// A character move gathers the terrain's triangles once for all its sweeps and contact queries
// (terrain::MoveScope). The shared gather must change nothing: the same characters, moved
// tick after tick on a generated cave world with and without it, end every tick bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/query/character.h"
#include "core/query/terrain_triangles.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

struct Trace {
  std::vector<CharacterResult> results;  // every character of every tick, in order
  QueryStats stats;
  int respawned = 0;  // characters that left the world and started again
};

// 96 capsules of three sizes at random points of the world's box (some in rock: they recover,
// some in caves: they fall, land, walk and jump), 240 ticks at 60 Hz; one fresh world per run.
Trace Simulate(bool shared_gather) {
  const std::unique_ptr<World> world = testing::MakeCaveWorld(7, {96, 64, 96});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  world->AddObserver(&index);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> x(-44, 44), y(-28, 28), turn(0, 6.2831853f);
  std::vector<CharacterMove> moves(96);
  std::vector<float> heading(moves.size()), vy(moves.size(), 0);
  for (size_t i = 0; i < moves.size(); ++i) {
    moves[i].radius = 0.3f + 0.1f * float(i % 3);
    moves[i].half_height = 0.5f + 0.25f * float(i % 3);
    moves[i].position = {x(rng), y(rng), x(rng)};
    heading[i] = turn(rng);
  }
  terrain::GatherCacheForTesting() = shared_gather;
  Trace run;
  std::vector<CharacterResult> results;
  for (int tick = 0; tick < 240; ++tick) {
    for (size_t i = 0; i < moves.size(); ++i) {
      if (tick % 40 == int(i % 40)) heading[i] = turn(rng);
      moves[i].displacement = {0.07f * std::cos(heading[i]), vy[i] / 60,
                               0.07f * std::sin(heading[i])};
      if (!ValidateCharacterMove(*world, moves[i], QueryLimits{}).ok()) {
        moves[i].position = {x(rng), y(rng), x(rng)};  // fell out of the world: a new start
        vy[i] = 0;
        ++run.respawned;
      }
      const absl::Status valid = ValidateCharacterMove(*world, moves[i], QueryLimits{});
      EXPECT_TRUE(valid.ok()) << valid;
    }
    MoveCharacters(index, cache, moves, nullptr, &results, &run.stats);
    for (size_t i = 0; i < moves.size(); ++i) {
      const CharacterResult& r = results[i];
      moves[i].position = r.position;
      const bool on_ground = r.ground == GroundState::kOnGround;
      vy[i] = on_ground ? (tick % 30 == int(i % 30) ? 5.0f : 0.0f) : std::max(vy[i] - 0.3f, -20.f);
      run.results.push_back(r);
    }
  }
  terrain::GatherCacheForTesting() = true;
  return run;
}

bool Same(const CharacterResult& a, const CharacterResult& b) {
  return std::memcmp(&a.position, &b.position, sizeof(Vec3)) == 0 && a.ground == b.ground &&
         std::memcmp(&a.ground_normal, &b.ground_normal, sizeof(Vec3)) == 0 &&
         a.ground_material == b.ground_material && a.collisions == b.collisions &&
         a.recovered == b.recovered && a.stepped == b.stepped &&
         a.touched_materials == b.touched_materials && a.swimming == b.swimming &&
         std::memcmp(&a.submerged_fraction, &b.submerged_fraction, sizeof(float)) == 0 &&
         a.status == b.status;
}

TEST(CharacterGatherTest, OneGatherPerMoveGivesBitIdenticalMoves) {
  const Trace plain = Simulate(false), shared = Simulate(true);
  ASSERT_EQ(plain.results.size(), shared.results.size());
  int differing = 0, on_ground = 0, recovered = 0, stepped = 0, sides = 0;
  for (size_t i = 0; i < plain.results.size(); ++i) {
    const CharacterResult& r = plain.results[i];
    ASSERT_TRUE(r.status.ok()) << r.status;
    differing += !Same(r, shared.results[i]);
    on_ground += r.ground == GroundState::kOnGround;
    recovered += r.recovered;
    stepped += r.stepped;
    sides += (r.collisions & kCollisionSides) != 0;
  }
  std::printf(
      "%zu moves: %d differ; %d on ground, %d recovered, %d stepped, %d met a wall; chunks "
      "visited %u plain, %u shared; %d respawned\n",
      plain.results.size(), differing, on_ground, recovered, stepped, sides,
      plain.stats.chunks_visited, shared.stats.chunks_visited, plain.respawned);
  EXPECT_EQ(differing, 0);
  // The run exercises what the shared gather serves: ground, walls, steps and recoveries.
  EXPECT_GT(on_ground, 1000);
  EXPECT_GT(recovered, 0);
  EXPECT_GT(stepped, 0);
  EXPECT_GT(sides, 100);
  // And the shared gather was used: its queries visit no chunk of their own.
  EXPECT_LT(shared.stats.chunks_visited, plain.stats.chunks_visited / 2);
}

// A sweep gathers box after box and drops the triangles it has (dedupe), whether a box comes from
// the move's scope or, reaching past it, from the world: the same triangles, each once, in the
// same order as the same boxes gathered with no scope, and together those of every box.
TEST(CharacterGatherTest, SweepGathersInAndPastTheScopeKeepEachTriangleOnce) {
  const std::unique_ptr<World> world = testing::MakeCaveWorld(7, {96, 64, 96});
  ChunkCollisionCache cache(*world, size_t(256) << 20);
  BroadphaseIndex index(*world);
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> at(-30, 30), size(0.5f, 3);
  int sweeps = 0, past_scope = 0, repeated = 0;
  for (int n = 0; n < 200; ++n) {
    const Vec3 c{at(rng), at(rng) * 0.6f, at(rng)};
    const Aabb scope_box{c - Vec3(3, 3, 3), c + Vec3(3, 3, 3)};
    // Boxes inside the scope and beyond it, overlapping one another, in a random order.
    std::vector<Aabb> boxes;
    for (int b = 0; b < 4; ++b) {
      const float reach = b % 2 == 0 ? 2.0f : 5.0f;  // odd boxes leave the scope
      const Vec3 p = c + Vec3(at(rng), at(rng), at(rng)) * (reach / 30);
      const Vec3 e(size(rng), size(rng), size(rng));
      boxes.push_back({p - e, p + e});
    }
    std::shuffle(boxes.begin(), boxes.end(), rng);
    const auto gather = [&](bool scoped, terrain::Gathered* g) {
      terrain::GatherCacheForTesting() = scoped;
      const terrain::MoveScope scope(index, cache, scope_box, nullptr);
      for (const Aabb& b : boxes) {
        past_scope += scoped && !scope.Covers(index, b);
        ASSERT_TRUE(terrain::Gather(index, cache, b, true, g, nullptr).ok());
      }
    };
    terrain::Gathered plain, scoped;
    gather(false, &plain);
    gather(true, &scoped);
    terrain::GatherCacheForTesting() = true;
    ASSERT_EQ(plain.tris.size(), scoped.tris.size()) << n;
    for (size_t i = 0; i < plain.tris.size(); ++i) {
      ASSERT_EQ(plain.tris[i].chunk, scoped.tris[i].chunk) << n << " " << i;
      ASSERT_EQ(plain.tris[i].index, scoped.tris[i].index) << n << " " << i;
    }
    std::vector<std::pair<const ChunkCollision*, uint32_t>> ids;
    for (const terrain::Tri& t : scoped.tris) ids.push_back({t.chunk, t.index});
    std::sort(ids.begin(), ids.end());
    repeated += int(std::adjacent_find(ids.begin(), ids.end()) != ids.end());
    // Nothing dropped that was not gathered before: the union of the boxes gathered one by one
    // without dedupe (the chunks stay alive in `plain`, so their addresses name them).
    std::vector<std::pair<const ChunkCollision*, uint32_t>> each;
    for (const Aabb& b : boxes) {
      terrain::Gathered one;
      ASSERT_TRUE(terrain::Gather(index, cache, b, false, &one, nullptr).ok());
      for (const terrain::Tri& t : one.tris) each.push_back({t.chunk, t.index});
    }
    std::sort(each.begin(), each.end());
    each.erase(std::unique(each.begin(), each.end()), each.end());
    ASSERT_EQ(each, ids) << n;
    sweeps += !plain.tris.empty();
  }
  std::printf("%d sweeps with triangles, %d boxes past the scope, %d with a repeat\n", sweeps,
              past_scope, repeated);
  EXPECT_EQ(repeated, 0);
  EXPECT_GT(sweeps, 50);
  EXPECT_GT(past_scope, 100);
}

}  // namespace
}  // namespace voxcol
