// The terrain's marching-cubes triangles near a query, gathered for the shape queries (Sweep,
// Overlap, Contacts): internal to core/query.
//
// Chunks are visited through the broadphase (chunks with no solid within a voxel are skipped
// unread) and each chunk's kD-tree is queried with a box (core/kdtree). Triangles are decoded once
// into world space with their unit face normal and the global fixed-point keys of their corners,
// which are bit-identical on both sides of a chunk seam (used to find neighbours across seams).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/narrowphase/support.h"
#include "core/query/query_types.h"

namespace voxcol::terrain {

// World-space bounding box of a posed shape (exact for its supports along the axes).
Aabb PosedBounds(const PosedShape& s);
inline Aabb Grow(const Aabb& b, float r) { return {b.min - Vec3(r, r, r), b.max + Vec3(r, r, r)}; }
inline Aabb Union(const Aabb& a, const Aabb& b) { return {Min(a.min, b.min), Max(a.max, b.max)}; }

// A sphere or capsule as its core segment (a sphere's centre twice) and radius, taken once per
// query: its extent along a triangle's normal then costs two dot products and no rotation (the
// plane early-outs of Contacts and Sweep). Other shapes are not round and have no core here.
struct RoundCore {
  explicit RoundCore(const PosedShape& s);

  bool round = false;
  Vec3 p[2];
  float radius = 0;
  float magnitude = 0;  // largest |coordinate| of the shape's origin, for PlaneSlack

  // Round only: the shape's extent along unit n, [*lo, *hi] of Dot(n, x) over its points.
  void Along(const Vec3& n, float* lo, float* hi) const {
    const float a = Dot(n, p[0]), b = Dot(n, p[1]);
    *lo = std::min(a, b) - radius;
    *hi = std::max(a, b) + radius;
  }
};

// What a plane early-out adds to its limit so that only pairs certainly apart are skipped: 1/1000
// of `scale` (the reach or the voxel) plus a few float steps of coordinates as large as
// `magnitude`. Far more than the exact tests' tolerance and the rounding of the dot products; the
// borderline pairs are left to the exact test.
inline float PlaneSlack(float scale, float magnitude) {
  return 1e-3f * std::fabs(scale) + 1e-5f * magnitude;
}

// Y, then Z, then X: the order chunks are reported in.
inline bool ChunkOrder(const ChunkKey& a, const ChunkKey& b) {
  return a.y != b.y ? a.y < b.y : (a.z != b.z ? a.z < b.z : a.x < b.x);
}

// Integer key of a mesh vertex: its global fixed-point coordinates, equal for the same lattice
// edge in every chunk (see ChunkMesh::Vertex).
struct VertexKey {
  int32_t x, y, z;
  bool operator==(const VertexKey& o) const { return x == o.x && y == o.y && z == o.z; }
};

// One terrain triangle near the query, decoded once.
struct Tri {
  const ChunkCollision* chunk;
  uint32_t index;  // in the chunk's mesh
  Vec3 v[3];
  Vec3 normal;  // unit, toward empty space
  VertexKey key[3];
};

// A ball around a posed shape that holds every point within some distance of it: the triangles
// and chunks outside it cannot touch the shape within that distance (Gather skips them).
struct Reach {
  Vec3 centre;
  float radius = std::numeric_limits<float>::infinity();  // world units; infinite: no culling
};

// Whether Contacts and Overlap cull by their reach on this thread (default true). Tests turn it
// off to get the answer of the plain gather.
bool& ReachCullingForTesting();

// Radius of a ball about the shape's origin (its pose's translation) that holds the whole shape.
// Exact for spheres and capsules; the half diagonal plus rounding for boxes.
float BoundingRadius(const ConvexShape& shape);

// The reach of CollectContacts with `margin` (world units) on a world of voxel size h: a contact
// lies within margin of the shape, and the triangles its internal-edge fix consults share the
// contact's edge or vertex up to a barycentric 1e-3 of an edge (< 2e-3 h), so one voxel of slack
// keeps every triangle that can change a contact, and the contacts equal those without culling.
// With ReachCullingForTesting() false (this thread only), it is infinite: the plain gather that
// tests compare the culled one with.
inline Reach ContactReach(const PosedShape& s, float margin, float h) {
  if (!ReachCullingForTesting()) return {};
  return {s.pose.translation, BoundingRadius(*s.shape) + margin + h};
}

// The triangles a sweep has gathered: a bit for each triangle of every chunk it took one from,
// found by the chunk's address. Ask only for a triangle that is then kept, so that its chunk stays
// in Gathered::chunks and no other chunk can take that address while the record lives. A chunk
// evicted and rebuilt during a move has a second address: its triangles can then be gathered
// twice, which costs a sweep time but does not change its answer.
class SeenTriangles {
 public:
  // One chunk's bits in the record. Its bits are found (and zeroed on the chunk's first sight) the
  // first time FirstTime is asked, so a chunk none of whose triangles gets that far costs no
  // look-up.
  class ChunkBits {
   public:
    // True the first time it is asked for triangle t of this chunk during the record's life.
    bool FirstTime(uint32_t t) {
      if (start_ == kNoStart) start_ = seen_->Start(*chunk_);
      uint64_t& word = seen_->words_[start_ + (t >> 6)];
      const uint64_t bit = uint64_t(1) << (t & 63);
      const bool first = (word & bit) == 0;
      word |= bit;
      return first;
    }

   private:
    friend class SeenTriangles;
    static constexpr uint32_t kNoStart = ~uint32_t(0);
    ChunkBits(SeenTriangles* seen, const ChunkCollision* chunk) : seen_(seen), chunk_(chunk) {}

    SeenTriangles* seen_;
    const ChunkCollision* chunk_;
    uint32_t start_ = kNoStart;  // an index, not a pointer: other chunks' bits may move words_
  };

  ChunkBits For(const ChunkCollision& c) { return ChunkBits(this, &c); }
  void Clear() {
    start_.clear();
    words_.clear();
  }

 private:
  uint32_t Start(const ChunkCollision& c);  // c's bits, zeroed on first sight

  absl::flat_hash_map<const ChunkCollision*, uint32_t> start_;
  std::vector<uint64_t> words_;
};

// Triangles gathered for one query, and the chunks they came from (kept alive).
struct Gathered {
  std::vector<ChunkCollisionPtr> chunks;
  std::vector<Tri> tris;
  SeenTriangles seen;  // sweeps only
  std::vector<uint32_t> scratch;
  uint32_t tests = 0;  // narrow tests, for stats
  // Checked between chunks and every kInterruptStride triangle tests; when it fires, `stopped`
  // holds why and the work stops.
  const QueryInterrupt* interrupt = nullptr;
  absl::Status stopped;
  // Triangles whose bounds miss this ball are not gathered, nor chunks whose mesh bounds miss it.
  Reach reach;
  // Past budget.max_triangles gathered triangles, Gather stops with budget.Exceeded() (also held
  // in `stopped`, so the narrow tests stop too).
  QueryBudget budget;

  void Clear() {
    chunks.clear();
    tris.clear();
    seen.Clear();
    tests = 0;
    interrupt = nullptr;
    stopped = absl::OkStatus();
    reach = {};
    budget = {};
  }
  // True when the query must stop (and records why). Cheap enough to call often.
  bool Interrupted() {
    if (interrupt == nullptr || !stopped.ok()) return !stopped.ok();
    stopped = interrupt->Check();
    return !stopped.ok();
  }
};

// Triangle tests between two interrupt checks.
constexpr uint32_t kInterruptStride = 16;

// Adds every triangle of the mesh chunks near `box` whose bounds overlap it and g->reach, chunk by
// chunk in Y, Z, X order. `dedupe` drops triangles gathered before (sweeps gather box after box).
// Returns the error of a chunk that could not be loaded, or g->stopped when g->interrupt fired or
// the gathered triangles went past g->budget.
absl::Status Gather(const BroadphaseIndex& index, ChunkCollisionCache& cache, const Aabb& box,
                    bool dedupe, Gathered* g, QueryStats* stats);

// What the queries of one character move share: they run back to back on a thread (its sweeps,
// contact queries and buried-shape checks), read one state of the world and stay near the
// character. Two things are kept for them while the scope lives:
// - The triangles over `box`, gathered once. Gather answers every box inside `box` on the same
//   index from these triangles: the same triangles in the same order as its own walk (a chunk's
//   kD-tree reports triangles in an order that does not depend on the box), without the tree
//   queries, chunk loads and decoding. Other boxes gather as usual, as does everything when the
//   first gather fails or passes kMaxTriangles.
// - A memo of small facts about voxel cells (which side of the surface a cell lies on), asked
//   again and again by the move's queries.
// When the first gather fails or passes kMaxTriangles, or GatherCacheForTesting() is false, the
// scope is inactive (Active() does not return it): the queries gather alone and remember nothing.
// Scopes do not nest (an inner one does nothing).
class MoveScope {
 public:
  static constexpr uint32_t kMaxTriangles = 4096;

  MoveScope(const BroadphaseIndex& index, ChunkCollisionCache& cache, const Aabb& box,
            QueryStats* stats);
  ~MoveScope();
  MoveScope(const MoveScope&) = delete;
  MoveScope& operator=(const MoveScope&) = delete;

  bool Covers(const BroadphaseIndex& index, const Aabb& box) const;
  absl::Status GatherFrom(const Aabb& box, bool dedupe, Gathered* g) const;

  // The scope active on this thread for `index`'s world, or null.
  static const MoveScope* Active(const BroadphaseIndex& index);

  // The fact remembered for `cell` during this move, or -1 (always, on an inactive scope). The
  // memo holds kMemoCells cells; remembering more overwrites one. Both are const like the rest of
  // the scope's interface, which queries get from Active(): the memo lives in the per-thread
  // buffers, not in the scope.
  int RecallCell(const Int3& cell) const;
  void RememberCell(const Int3& cell, uint8_t fact) const;  // does nothing on an inactive scope
  static constexpr int kMemoCells = 8;
  static_assert((kMemoCells & (kMemoCells - 1)) == 0, "RememberCell overwrites by a mask");

 private:
  struct Chunk {
    ChunkCollisionPtr collision;
    uint32_t begin, end;  // its triangles in `gathered.tris`
    Aabb bounds;          // the union of their bounds
  };
  // Per thread, reused (queries must not allocate in steady state); held by the active scope.
  struct Buffers {
    Gathered gathered;
    std::vector<Aabb> bounds;  // per triangle of `gathered.tris`
    std::vector<Chunk> chunks;
    int memo_count = 0;
    Int3 memo_cells[kMemoCells];
    uint8_t memo_facts[kMemoCells];
  };
  static Buffers& LocalBuffers();

  const BroadphaseIndex& index_;
  const Aabb box_;
  Buffers* buffers_ = nullptr;  // null: inactive
};

// Whether MoveScope caches on this thread (default true): its triangles and its memo. Tests turn
// it off to compare with the queries' own gathers.
bool& GatherCacheForTesting();

// A contact of the shape with one gathered triangle.
struct RawContact {
  Vec3 position;  // on the triangle
  Vec3 normal;    // from the terrain toward the shape
  float depth;    // > 0 penetration, < 0 separation
  uint32_t tri;   // index in Gathered::tris
};

// How far the shape reaches behind the plane of `t` (> 0: below it by that much).
inline float PlaneDepth(const PosedShape& s, const Tri& t) {
  return Dot(t.normal, t.v[0]) - Dot(t.normal, s.Support(-t.normal));
}

// The gathered triangles and their contacts of the shape query running on this thread. Queries
// run on worker threads and must not allocate in steady state; one query runs at a time per
// thread, and none calls another, so Sweep, Overlap and Contacts share these buffers.
struct ShapeQueryScratch {
  Gathered gathered;
  std::vector<RawContact> contacts;
};
ShapeQueryScratch& LocalScratch();

}  // namespace voxcol::terrain
