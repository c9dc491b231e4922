// Large shape queries (issue 16): the culled gather of Contacts and Overlap (chunks and triangles
// outside the shape's reach are skipped) answers exactly as the plain gather does, and the
// bucketed, memoized edge index answers as a scan over every gathered triangle does.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/query/active_edges.h"
#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/sweep.h"
#include "tests/core/test_worlds.h"

namespace voxcol {
namespace {

struct CaveScene {
  std::unique_ptr<World> world = testing::MakeCaveWorld(7, {128, 96, 128});
  BroadphaseIndex index{*world};
  ChunkCollisionCache cache{*world, size_t(256) << 20};
};

CaveScene& Scene() {
  static CaveScene* scene = new CaveScene;
  return *scene;
}

// Large shapes at seeded random positions inside the world (many in the solid, many in caves).
std::vector<PosedShape> LargePoses(const std::vector<ConvexShape>& shapes, int per_shape,
                                   uint32_t seed) {
  std::mt19937 rng(seed);
  const Aabb b = Scene().world->world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x, b.max.x), uy(b.min.y, b.max.y),
      uz(b.min.z, b.max.z), angle(0, 6.2831853f), axis(-1, 1);
  std::vector<PosedShape> poses;
  for (const ConvexShape& shape : shapes) {
    for (int i = 0; i < per_shape; ++i) {
      const Quat q = Quat::FromAxisAngle({axis(rng), axis(rng), 1.0f}, angle(rng));
      poses.push_back({&shape, {q, {ux(rng), uy(rng), uz(rng)}}});
    }
  }
  return poses;
}

std::vector<ConvexShape> LargeShapes() {
  return {MakeSphere(16), MakeSphere(40), MakeSphere(64), MakeBox({30, 10, 50}, 2),
          MakeCapsule(40, 20)};
}

// Runs f with the reach culling of this thread off.
template <typename F>
void Plain(F&& f) {
  terrain::ReachCullingForTesting() = false;
  f();
  terrain::ReachCullingForTesting() = true;
}

void ExpectSameContacts(const ContactsResult& a, const ContactsResult& b) {
  ASSERT_EQ(a.chunks.size(), b.chunks.size());
  for (size_t m = 0; m < a.chunks.size(); ++m) {
    const ChunkContacts &x = a.chunks[m], &y = b.chunks[m];
    ASSERT_EQ(x.chunk, y.chunk);
    ASSERT_EQ(x.count, y.count);
    for (int k = 0; k < x.count; ++k) {
      const Contact &p = x.points[k], &q = y.points[k];
      EXPECT_EQ(p.triangle, q.triangle);
      EXPECT_EQ(p.material, q.material);
      EXPECT_EQ(p.depth, q.depth);
      for (int a = 0; a < 3; ++a) {
        EXPECT_EQ(p.position[a], q.position[a]);
        EXPECT_EQ(p.normal[a], q.normal[a]);
      }
    }
  }
  EXPECT_EQ(a.buried, b.buried);
  EXPECT_EQ(a.penetration.depth, b.penetration.depth);
  EXPECT_EQ(a.water.submerged_volume, b.water.submerged_volume);
}

TEST(LargeQueryTest, CulledContactsEqualThePlainGather) {
  CaveScene& s = Scene();
  const std::vector<ConvexShape> shapes = LargeShapes();
  int touching = 0, culled = 0;
  for (float margin : {0.0f, 3.0f}) {
    for (const PosedShape& pose : LargePoses(shapes, 6, 41)) {
      ContactsSettings settings;
      settings.margin = margin;
      ContactsResult fast, plain;
      QueryStats fast_stats, plain_stats;
      Contacts(s.index, s.cache, pose, settings, &fast, &fast_stats);
      Plain([&] { Contacts(s.index, s.cache, pose, settings, &plain, &plain_stats); });
      ASSERT_TRUE(fast.load_status.ok() && plain.load_status.ok());
      SCOPED_TRACE(::testing::Message() << "shape type " << int(pose.shape->type) << " at "
                                        << pose.pose.translation.x << "," << pose.pose.translation.y
                                        << "," << pose.pose.translation.z << " margin " << margin);
      ExpectSameContacts(fast, plain);
      touching += fast.total_points() > 0;
      culled += fast_stats.triangles_tested < plain_stats.triangles_tested;
    }
  }
  // The comparison means something: most poses touch terrain, and the culling skipped work.
  EXPECT_GE(touching, 40);
  EXPECT_GE(culled, 40);
}

TEST(LargeQueryTest, CulledOverlapsEqualThePlainGather) {
  CaveScene& s = Scene();
  const std::vector<ConvexShape> shapes = LargeShapes();
  int touching = 0, culled = 0;
  for (const PosedShape& pose : LargePoses(shapes, 6, 42)) {
    OverlapResult fast, plain;
    QueryStats fast_stats, plain_stats;
    Overlap(s.index, s.cache, pose, {}, &fast, &fast_stats);
    Plain([&] { Overlap(s.index, s.cache, pose, {}, &plain, &plain_stats); });
    ASSERT_TRUE(fast.load_status.ok() && plain.load_status.ok());
    EXPECT_EQ(fast.touches_solid, plain.touches_solid);
    EXPECT_EQ(fast.touches_water, plain.touches_water);
    ASSERT_EQ(fast.chunks.size(), plain.chunks.size());
    for (size_t i = 0; i < fast.chunks.size(); ++i) {
      EXPECT_EQ(fast.chunks[i].key, plain.chunks[i].key);
      EXPECT_EQ(fast.chunks[i].classes, plain.chunks[i].classes);
    }
    EXPECT_EQ(fast.penetration.depth, plain.penetration.depth);
    for (int a = 0; a < 3; ++a) {
      EXPECT_EQ(fast.penetration.normal[a], plain.penetration.normal[a]);
      EXPECT_EQ(fast.penetration.position[a], plain.penetration.position[a]);
    }
    touching += fast.touches_solid;
    culled += fast_stats.triangles_tested < plain_stats.triangles_tested;
  }
  EXPECT_GE(touching, 20);
  EXPECT_GE(culled, 20);
}

// The work budget: each shape query that gathers more triangles than settings.budget allows stops
// with RESOURCE_EXHAUSTED naming the budget's flag and limit; the same query within the budget
// (or with the limit 0, none) answers.
TEST(LargeQueryTest, QueriesPastTheTriangleBudgetAreResourceExhausted) {
  CaveScene& s = Scene();
  const ConvexShape sphere = MakeSphere(40);
  const Aabb w = s.world->world_bounds();
  const PosedShape pose{&sphere, {Quat(), (w.min + w.max) * 0.5f}};
  ContactsResult contacts;
  QueryStats stats;
  Contacts(s.index, s.cache, pose, {}, &contacts, &stats);
  ASSERT_TRUE(contacts.load_status.ok());
  const uint32_t gathered = stats.triangles_tested;  // the narrow phase tests each one once
  ASSERT_GT(gathered, 20000u);

  auto expect_exhausted = [](const absl::Status& st, uint32_t limit) {
    EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
    EXPECT_NE(st.message().find(absl::StrCat("--max_query_triangles=", limit)), std::string::npos)
        << st;
  };
  ContactsSettings tight;
  tight.budget.max_triangles = gathered / 2;
  Contacts(s.index, s.cache, pose, tight, &contacts);
  expect_exhausted(contacts.load_status, gathered / 2);
  OverlapSettings tight_overlap;
  tight_overlap.budget.max_triangles = gathered / 2;
  OverlapResult overlap;
  Overlap(s.index, s.cache, pose, tight_overlap, &overlap);
  expect_exhausted(overlap.load_status, gathered / 2);
  SweepSettings tight_sweep;
  tight_sweep.collection = HitCollection::kAll;
  tight_sweep.budget.max_triangles = 1000;
  SweepResult sweep;
  Sweep(s.index, s.cache, {pose, {1, 0, 0}, 40}, tight_sweep, &sweep);
  expect_exhausted(sweep.load_status, 1000);

  // Exactly at the budget, and without one, the query answers.
  ContactsSettings exact;
  exact.budget.max_triangles = gathered;
  Contacts(s.index, s.cache, pose, exact, &contacts);
  EXPECT_TRUE(contacts.load_status.ok()) << contacts.load_status;
  ContactsSettings unlimited;
  unlimited.budget.max_triangles = 0;
  Contacts(s.index, s.cache, pose, unlimited, &contacts);
  EXPECT_TRUE(contacts.load_status.ok()) << contacts.load_status;
  tight_sweep.budget.max_triangles = 0;
  Sweep(s.index, s.cache, {pose, {1, 0, 0}, 40}, tight_sweep, &sweep);
  EXPECT_TRUE(sweep.load_status.ok()) << sweep.load_status;
}

// The edge rule of active_edges.h evaluated by brute force: neighbours of edge k of triangle i are
// all other triangles holding both its vertex keys, found through an ordered map.
class NaiveEdges {
 public:
  explicit NaiveEdges(const std::vector<terrain::Tri>& tris) : tris_(tris) {
    for (uint32_t j = 0; j < tris.size(); ++j) {
      for (int c = 0; c < 3; ++c) at_[Key(tris[j].key[c])].push_back({j, c});
    }
  }
  bool Active(uint32_t i, int k) const {
    const terrain::Tri& t = tris_[i];
    const terrain::VertexKey &a = t.key[k], &b = t.key[(k + 1) % 3];
    bool any = false;
    for (auto [j, c] : at_.at(Key(a))) {
      const terrain::Tri& u = tris_[j];
      if (j == i || !(u.key[0] == b || u.key[1] == b || u.key[2] == b)) continue;
      any = true;
      if (Dot(t.normal, u.normal) >= kActiveEdgeCos) continue;
      const Vec3 centroid = (u.v[0] + u.v[1] + u.v[2]) * (1.0f / 3.0f);
      if (Dot(centroid - t.v[k], t.normal) < 0) return true;
    }
    return !any;
  }
  bool VertexActive(uint32_t i, int k) const {
    return VertexActive(i, k, [this](uint32_t j, int e) { return Active(j, e); });
  }
  // Whether edge_active(j, e) holds for an edge e at the vertex of a triangle j there.
  template <typename EdgeActive>
  bool VertexActive(uint32_t i, int k, EdgeActive&& edge_active) const {
    for (auto [j, c] : at_.at(Key(tris_[i].key[k]))) {
      if (edge_active(j, c) || edge_active(j, (c + 2) % 3)) return true;
    }
    return false;
  }

 private:
  static std::tuple<int32_t, int32_t, int32_t> Key(const terrain::VertexKey& v) {
    return {v.x, v.y, v.z};
  }
  const std::vector<terrain::Tri>& tris_;
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::vector<std::pair<uint32_t, int>>> at_;
};

// What EdgeTable must answer: an edge or corner that its chunk's edge flags mark known has every
// neighbour in that chunk, so it answers as the naive scan over the whole world's triangles; any
// other edge (on a chunk seam) as the naive scan over the gathered triangles, and any other corner
// is active when an edge of a gathered triangle there is, by these rules. A flag marked known for
// an edge whose neighbours lie in another chunk, or a wrong flag, disagrees with the world.
class ExpectedEdges {
 public:
  ExpectedEdges(const std::vector<terrain::Tri>& gathered, const std::vector<terrain::Tri>& world)
      : gathered_(gathered), in_gathered_(gathered), in_world_(world) {
    for (uint32_t j = 0; j < world.size(); ++j) {
      const ChunkKey& c = world[j].chunk->key;
      world_index_[{c.x, c.y, c.z, world[j].index}] = j;
    }
  }
  bool Active(uint32_t i, int k) {
    ++(Flags(i) & edge_flags::EdgeKnown(k) ? from_flags : from_gathered);
    return Edge(i, k);
  }
  bool VertexActive(uint32_t i, int k) {
    if (Flags(i) & edge_flags::CornerKnown(k)) {
      return ++from_flags, in_world_.VertexActive(World(i), k);
    }
    ++from_gathered;
    return in_gathered_.VertexActive(i, k, [this](uint32_t j, int e) { return Edge(j, e); });
  }
  int from_flags = 0, from_gathered = 0;  // questions answered each way

 private:
  bool Edge(uint32_t i, int k) const {
    return Flags(i) & edge_flags::EdgeKnown(k) ? in_world_.Active(World(i), k)
                                               : in_gathered_.Active(i, k);
  }
  uint16_t Flags(uint32_t i) const { return gathered_[i].chunk->EdgeFlags()[gathered_[i].index]; }
  uint32_t World(uint32_t i) const {
    const ChunkKey& c = gathered_[i].chunk->key;
    return world_index_.at({c.x, c.y, c.z, gathered_[i].index});
  }
  const std::vector<terrain::Tri>& gathered_;
  NaiveEdges in_gathered_, in_world_;
  std::map<std::tuple<int32_t, int32_t, int32_t, uint32_t>, uint32_t> world_index_;
};

// Every triangle of the scene's world.
const std::vector<terrain::Tri>& WorldTriangles() {
  static const std::vector<terrain::Tri>* tris = [] {
    auto* g = new terrain::Gathered;
    CaveScene& s = Scene();
    EXPECT_TRUE(terrain::Gather(s.index, s.cache, s.world->world_bounds(), false, g, nullptr).ok());
    return &g->tris;
  }();
  return *tris;
}

TEST(LargeQueryTest, EdgeIndexAnswersAsTheNaiveScan) {
  CaveScene& s = Scene();
  std::mt19937 rng(43);
  const Aabb w = s.world->world_bounds();
  const Vec3 size = w.max - w.min;
  // A block of caves, the whole world, and a thin rod across it.
  const Aabb boxes[] = {{w.min + size * 0.2f, w.min + size * 0.55f},
                        w,
                        {w.min + Vec3(size.x * 0.47f, size.y * 0.3f, 3),
                         w.min + Vec3(size.x * 0.48f, size.y * 0.31f, size.z - 3)}};
  // Two far corners gathered together: a sparse box of cells, which the index keeps as one bucket.
  const Aabb corners[] = {{w.min, w.min + size * 0.15f}, {w.max - size * 0.15f, w.max}};
  for (int run = 0; run < 4; ++run) {
    terrain::Gathered g;
    for (const Aabb& box :
         run < 3 ? std::vector<Aabb>{boxes[run]} : std::vector<Aabb>{corners[0], corners[1]}) {
      ASSERT_TRUE(terrain::Gather(s.index, s.cache, box, false, &g, nullptr).ok());
    }
    ASSERT_GT(g.tris.size(), 64u);  // past the scan: the index answers
    terrain::EdgeTable edges(g.tris);
    ExpectedEdges naive(g.tris, WorldTriangles());
    // Random order and every question twice, so memoized answers are checked too.
    std::uniform_int_distribution<uint32_t> pick(0, uint32_t(g.tris.size() - 1));
    int active = 0, vertex_active = 0;
    for (int q = 0; q < 6000; ++q) {
      const uint32_t i = pick(rng);
      const int k = int(rng() % 3);
      const bool want = naive.Active(i, k), want_vertex = naive.VertexActive(i, k);
      ASSERT_EQ(edges.Active(i, k), want) << "triangle " << i << " edge " << k;
      ASSERT_EQ(edges.VertexActive(i, k), want_vertex) << "triangle " << i << " corner " << k;
      ASSERT_EQ(edges.Active(i, k), want);
      ASSERT_EQ(edges.VertexActive(i, k), want_vertex);
      active += want;
      vertex_active += want_vertex;
    }
    // Both answers occur, so a table stuck on one would fail.
    EXPECT_GT(active, 0);
    EXPECT_LT(active, 6000);
    EXPECT_GT(vertex_active, 0);
    EXPECT_LT(vertex_active, 6000);
    // Both ways answer: the chunks' flags and the index over the gathered seams.
    EXPECT_GT(naive.from_flags, 6000);
    EXPECT_GT(naive.from_gathered, 100);
  }
}

// A sweep asks the table questions, then gathers the next box into the same triangles: answers
// afterwards must count the new triangles as neighbours (an index built once missed them, and
// edges whose neighbour came later read as real edges).
TEST(LargeQueryTest, EdgeIndexFollowsTrianglesGatheredAfterItWasBuilt) {
  CaveScene& s = Scene();
  const Aabb w = s.world->world_bounds();
  const Vec3 size = w.max - w.min;
  const Vec3 lo = w.min + size * 0.3f, hi = w.min + size * 0.5f;
  const float mid = (lo.x + hi.x) * 0.5f;
  terrain::Gathered g;
  ASSERT_TRUE(
      terrain::Gather(s.index, s.cache, {lo, Vec3(mid, hi.y, hi.z)}, false, &g, nullptr).ok());
  const size_t first = g.tris.size();
  ASSERT_GT(first, 64u);
  terrain::EdgeTable edges(g.tris);
  for (uint32_t i = 0; i < first; ++i)
    for (int k = 0; k < 3; ++k) edges.Active(i, k), edges.VertexActive(i, k);  // index + memo
  ASSERT_TRUE(
      terrain::Gather(s.index, s.cache, {Vec3(mid, lo.y, lo.z), hi}, false, &g, nullptr).ok());
  ASSERT_GT(g.tris.size(), first);
  ExpectedEdges naive(g.tris, WorldTriangles());
  const std::vector<terrain::Tri> before(g.tris.begin(), g.tris.begin() + first);
  ExpectedEdges naive_before(before, WorldTriangles());
  int changed = 0;  // answers for old triangles that the new ones change
  for (uint32_t i = 0; i < g.tris.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      const bool want = naive.Active(i, k);
      ASSERT_EQ(edges.Active(i, k), want) << "triangle " << i << " edge " << k;
      ASSERT_EQ(edges.VertexActive(i, k), naive.VertexActive(i, k)) << "triangle " << i;
      if (i < first) changed += naive_before.Active(i, k) != want;
    }
  }
  EXPECT_GT(changed, 0);  // the second box really completed seam edges of the first
}

}  // namespace
}  // namespace voxcol
