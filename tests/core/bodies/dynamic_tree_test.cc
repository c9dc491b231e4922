// The dynamic AABB tree against brute force over its leaves' fat boxes after thousands of random
// inserts, moves and removes, with the structure validated after every operation.
#include "core/bodies/dynamic_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace voxcol {
namespace {

Aabb RandomBox(std::mt19937& rng, float world) {
  std::uniform_real_distribution<float> pos(-world, world), size(0.05f, 3.0f);
  const Vec3 c{pos(rng), pos(rng), pos(rng)};
  const Vec3 h{size(rng), size(rng), size(rng)};
  return {c - h, c + h};
}

// Independent slab test in double: does the segment o + t d, t in [0, max_t], meet the box?
bool SegmentMeetsBox(const Vec3& o, const Vec3& d, double max_t, const Aabb& b) {
  double t0 = 0, t1 = max_t;
  for (int a = 0; a < 3; ++a) {
    if (d[a] == 0) {
      if (o[a] < b.min[a] || o[a] > b.max[a]) return false;
      continue;
    }
    double u = (double(b.min[a]) - o[a]) / d[a], v = (double(b.max[a]) - o[a]) / d[a];
    if (u > v) std::swap(u, v);
    t0 = std::max(t0, u);
    t1 = std::min(t1, v);
  }
  return t0 <= t1;
}

struct Leaf {
  int32_t proxy;
  Aabb tight;
};

TEST(DynamicAabbTree, RandomOpsMatchBruteForceAndStayValid) {
  std::mt19937 rng(42);
  DynamicAabbTree tree(0.1f);
  std::map<uint32_t, Leaf> leaves;  // user data -> leaf
  uint32_t next_id = 0;
  int ops = 0, queries = 0, rays = 0;
  std::uniform_real_distribution<float> unit(-1, 1), step(-0.5f, 0.5f);
  for (int i = 0; i < 6000; ++i) {
    const int op = int(rng() % 10);
    if (leaves.size() < 20 || op < 3) {
      const Aabb b = RandomBox(rng, 60);
      leaves[next_id] = {tree.CreateProxy(b, next_id), b};
      ++next_id;
    } else if (op < 5) {
      auto it = std::next(leaves.begin(), rng() % leaves.size());
      tree.DestroyProxy(it->second.proxy);
      leaves.erase(it);
    } else {
      auto it = std::next(leaves.begin(), rng() % leaves.size());
      // Mostly small steps, sometimes a teleport.
      const Vec3 d = rng() % 20 == 0 ? Vec3{unit(rng) * 50, unit(rng) * 50, unit(rng) * 50}
                                     : Vec3{step(rng), step(rng), step(rng)};
      Aabb& t = it->second.tight;
      t = {t.min + d, t.max + d};
      tree.MoveProxy(it->second.proxy, t, d);
    }
    ++ops;
    ASSERT_TRUE(tree.Validate()) << "after operation " << i;
    ASSERT_EQ(tree.proxy_count(), int32_t(leaves.size()));
    for (const auto& [id, leaf] : leaves) {
      ASSERT_EQ(tree.UserData(leaf.proxy), id);
      ASSERT_TRUE(ContainsBox(tree.FatBox(leaf.proxy), leaf.tight)) << "leaf " << id;
    }
    if (i % 10 != 0) continue;
    // Box queries, with and without inflation.
    const Aabb q = RandomBox(rng, 60);
    const float inflate = rng() % 2 ? 0.0f : 2.5f;
    std::vector<uint32_t> got, want;
    tree.Query(
        q, inflate, [&](uint32_t id) { got.push_back(id); }, nullptr);
    for (const auto& [id, leaf] : leaves) {
      if (Inflate(tree.FatBox(leaf.proxy), inflate).Overlaps(q)) want.push_back(id);
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want) << "box query after operation " << i;
    ++queries;
    // Ray queries: every leaf box the segment crosses, no clipping.
    Vec3 o{unit(rng) * 70, unit(rng) * 70, unit(rng) * 70};
    Vec3 d = Normalize(Vec3{unit(rng), unit(rng), unit(rng)});
    if (rng() % 8 == 0) d = Vec3{0, 0, 1};  // axis-parallel
    const float max_t = 5.0f + 100.0f * (unit(rng) + 1);
    got.clear();
    want.clear();
    tree.RayCast(
        o, d, max_t, inflate,
        [&](uint32_t id, float t) {
          got.push_back(id);
          return t;
        },
        nullptr);
    for (const auto& [id, leaf] : leaves) {
      if (SegmentMeetsBox(o, d, max_t, Inflate(tree.FatBox(leaf.proxy), inflate)))
        want.push_back(id);
    }
    std::sort(got.begin(), got.end());
    // Float slab clipping may differ from the double oracle on a box the ray grazes: allow none
    // here (boxes are random, grazes have measure zero at this count) but report them.
    ASSERT_EQ(got, want) << "ray query after operation " << i;
    ++rays;
  }
  EXPECT_EQ(ops, 6000);
  EXPECT_GT(queries, 500);
  EXPECT_GT(rays, 500);
  // A balanced tree: far below the ~150 leaves' worst-case chain.
  EXPECT_LE(tree.Height(), 4 * 8);
}

TEST(DynamicAabbTree, SmallMovesInsideTheFatBoxDoNotReinsert) {
  DynamicAabbTree tree(0.5f);
  const Aabb b{{0, 0, 0}, {1, 1, 1}};
  const int32_t p = tree.CreateProxy(b, 7);
  EXPECT_FALSE(tree.MoveProxy(p, {{0.2f, 0, 0}, {1.2f, 1, 1}}, {0.2f, 0, 0}));
  EXPECT_TRUE(tree.MoveProxy(p, {{2, 0, 0}, {3, 1, 1}}, {1.8f, 0, 0}));
  // Fattened by the margin and stretched along the motion.
  EXPECT_FLOAT_EQ(tree.FatBox(p).min.x, 1.5f);
  EXPECT_GT(tree.FatBox(p).max.x, 3.5f);
  EXPECT_TRUE(tree.Validate());
}

TEST(DynamicAabbTree, RayWalkStopsWhenTheVisitorClips) {
  DynamicAabbTree tree(0.0f);
  for (uint32_t i = 0; i < 100; ++i) {
    const float x = float(i) * 3;
    tree.CreateProxy({{x, -1, -1}, {x + 1, 1, 1}}, i);
  }
  // Clipping at the first leaf's distance leaves only leaves entered before it.
  std::vector<uint32_t> seen;
  DynamicTreeStats stats;
  tree.RayCast(
      {-5, 0, 0}, {1, 0, 0}, 1000, 0,
      [&](uint32_t id, float) {
        seen.push_back(id);
        return float(id) * 3 + 5;  // the hit distance inside leaf id
      },
      &stats);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), 0u);  // nearest first
  EXPECT_LE(seen.size(), 3u);
  EXPECT_LT(stats.nodes_visited, 40);
}

}  // namespace
}  // namespace voxcol
