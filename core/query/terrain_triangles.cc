#include "core/query/terrain_triangles.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/mesh/marching_cubes.h"

namespace voxcol::terrain {

namespace {

// The global fixed-point key of vertex i of mesh m.
VertexKey KeyOf(const ChunkMesh& m, uint32_t i) {
  const QuantizedVertex& q = m.vertices[i];
  return {m.FixedOrigin(0) + q[0], m.FixedOrigin(1) + q[1], m.FixedOrigin(2) + q[2]};
}

// Squared distance from p to the box [lo, hi].
float DistanceSq(const Vec3& p, const Vec3& lo, const Vec3& hi) {
  const Vec3 d = Max(Max(lo - p, p - hi), Vec3(0, 0, 0));
  return Dot(d, d);
}

// Whether the box [lo, hi] misses the ball.
bool Misses(const Reach& r, const Vec3& lo, const Vec3& hi) {
  return r.radius != std::numeric_limits<float>::infinity() &&
         DistanceSq(r.centre, lo, hi) > r.radius * r.radius;
}

}  // namespace

bool& ReachCullingForTesting() {
  thread_local bool enabled = true;
  return enabled;
}

float BoundingRadius(const ConvexShape& shape) {
  float core = 0;
  switch (shape.type) {
    case ShapeType::kSphere:
      break;
    case ShapeType::kCapsule:
      core = shape.half_height;
      break;
    case ShapeType::kBox:
      core = Length(shape.half_extents);
      break;
    case ShapeType::kConvexHull:
      for (int i = 0; i < shape.num_points; ++i) core = std::max(core, Length(shape.points[i]));
      break;
    case ShapeType::kTriangle:
      for (const Vec3& p : shape.triangle) core = std::max(core, Length(p));
      break;
  }
  return core + shape.convex_radius;
}

RoundCore::RoundCore(const PosedShape& s)
    : round(s.shape->type == ShapeType::kSphere || s.shape->type == ShapeType::kCapsule),
      radius(s.Radius()) {
  const Vec3& t = s.pose.translation;
  p[0] = p[1] = t;
  if (s.shape->type == ShapeType::kCapsule) s.CapsuleSegment(&p[0], &p[1]);
  magnitude = std::max({std::fabs(t.x), std::fabs(t.y), std::fabs(t.z)});
}

// World-space bounding box of a posed shape (exact for its supports along the axes). Spheres and
// capsules in closed form: a character move asks for several boxes per sweep.
Aabb PosedBounds(const PosedShape& s) {
  const float r = s.Radius();
  if (s.shape->type == ShapeType::kSphere) {
    const Vec3 t = s.pose.translation;
    return {t - Vec3(r, r, r), t + Vec3(r, r, r)};
  }
  if (s.shape->type == ShapeType::kCapsule) {
    Vec3 p0, p1;
    s.CapsuleSegment(&p0, &p1);
    return {Min(p0, p1) - Vec3(r, r, r), Max(p0, p1) + Vec3(r, r, r)};
  }
  Aabb box;
  for (int a = 0; a < 3; ++a) {
    Vec3 d;
    d[a] = 1;
    box.max[a] = s.Support(d)[a];
    d[a] = -1;
    box.min[a] = s.Support(d)[a];
  }
  return box;
}

namespace {

// The mesh chunks near `box`: mesh chunk K covers voxel coordinates [8K + 0.5, 8K + 8.5] per axis.
IntBox MeshKeys(const World& world, const Aabb& box) {
  const float inv = 1.0f / world.voxel_size();
  IntBox keys;
  for (int a = 0; a < 3; ++a) {
    keys.min[a] = int32_t(std::ceil((box.min[a] * inv - 8.5f) / kChunkSize));
    keys.max[a] = int32_t(std::floor((box.max[a] * inv - 0.5f) / kChunkSize)) + 1;
  }
  const IntBox range = MeshedChunkRange(world);
  for (int a = 0; a < 3; ++a) {
    keys.min[a] = std::max(keys.min[a], range.min[a]);
    keys.max[a] = std::min(keys.max[a], range.max[a]);
  }
  return keys;
}

// Chunk `key`'s mesh box, world units.
Aabb ChunkMeshBox(const World& world, const ChunkKey& key) {
  const Vec3 lo = Vec3(float(kChunkSize * key.x) + 0.5f, float(kChunkSize * key.y) + 0.5f,
                       float(kChunkSize * key.z) + 0.5f) *
                  world.voxel_size();
  return {lo, lo + Vec3(1, 1, 1) * (kChunkSize * world.voxel_size())};
}

// Whether chunk `key`'s mesh box misses the reach.
bool ChunkMisses(const World& world, const Reach& reach, const ChunkKey& key) {
  const Aabb box = ChunkMeshBox(world, key);
  return Misses(reach, box.min, box.max);
}

// Whether chunk `key`'s mesh box, grown by 1/1000 voxel for the rounding of decoded vertices, lies
// inside the reach: then no triangle of the chunk misses it.
bool ChunkInsideReach(const World& world, const Reach& reach, const ChunkKey& key) {
  if (reach.radius == std::numeric_limits<float>::infinity()) return true;
  const Aabb box = ChunkMeshBox(world, key);
  const float grow = 1e-3f * world.voxel_size();
  const Vec3 far = Max(reach.centre - box.min, box.max - reach.centre) + Vec3(grow, grow, grow);
  return Dot(far, far) < reach.radius * reach.radius;
}

// Whether `tri` is within the reach (`in_reach`: its chunk is known to lie inside it).
bool InReach(const Tri& tri, bool in_reach, const Gathered& g) {
  return in_reach || !Misses(g.reach, Min(Min(tri.v[0], tri.v[1]), tri.v[2]),
                             Max(Max(tri.v[0], tri.v[1]), tri.v[2]));
}

thread_local const MoveScope* active_move = nullptr;

}  // namespace

uint32_t SeenTriangles::Start(const ChunkCollision& c) {
  const auto [it, inserted] = start_.try_emplace(&c, uint32_t(words_.size()));
  if (inserted) words_.resize(words_.size() + (c.mesh.triangle_count() + 63) / 64, 0);
  return it->second;
}

bool& GatherCacheForTesting() {
  thread_local bool enabled = true;
  return enabled;
}

// Adds every triangle of the mesh chunks near `box` whose bounds overlap it, chunk by chunk in
// Y, Z, X order. Chunks whose broadphase record has no solid within a voxel hold no triangles and
// are skipped unread. `dedupe` drops triangles gathered before (sweeps gather box after box).
absl::Status Gather(const BroadphaseIndex& index, ChunkCollisionCache& cache, const Aabb& box,
                    bool dedupe, Gathered* g, QueryStats* stats) {
  if (const MoveScope* c = active_move; c != nullptr && c->Covers(index, box)) {
    return c->GatherFrom(box, dedupe, g);
  }
  const World& world = index.world();
  const IntBox keys = MeshKeys(world, box);
  BroadphaseIndex::ReadScope scope(index);
  KdStats kd;
  uint32_t visited = 0, builds = 0;
  for (int32_t y = keys.min.y; y < keys.max.y; ++y)
    for (int32_t z = keys.min.z; z < keys.max.z; ++z)
      for (int32_t x = keys.min.x; x < keys.max.x; ++x) {
        const ChunkKey key{x, y, z};
        if (world.chunk_bounds().Contains(key) && !index.MayTouch(key, kClassSolid, scope)) {
          continue;
        }
        if (ChunkMisses(world, g->reach, key)) continue;
        if (g->Interrupted()) return g->stopped;
        bool built = false;
        absl::Status error;
        ChunkCollisionPtr c = cache.GetChecked(key, &error, &built);
        if (c == nullptr) return error;
        ++visited;
        builds += built;
        if (c->tree.empty()) continue;
        g->scratch.clear();
        AllTrianglesCollector collector(&g->scratch);
        c->tree.CollideAabb(c->mesh, box, collector, &kd);
        if (g->scratch.empty()) continue;
        const bool in_reach = ChunkInsideReach(world, g->reach, key);
        bool used = false;
        SeenTriangles::ChunkBits seen = g->seen.For(*c);
        const ChunkMesh& m = c->mesh;
        for (uint32_t t : g->scratch) {
          const std::array<uint32_t, 3> ix = m.TriangleIndices(t);
          Tri tri{c.get(),
                  t,
                  {m.Vertex(ix[0]), m.Vertex(ix[1]), m.Vertex(ix[2])},
                  {},
                  {KeyOf(m, ix[0]), KeyOf(m, ix[1]), KeyOf(m, ix[2])}};
          // FirstTime last: it is asked only about a triangle that is then kept.
          if (!InReach(tri, in_reach, *g) || (dedupe && !seen.FirstTime(t))) {
            continue;
          }
          tri.normal = Normalize(Cross(tri.v[1] - tri.v[0], tri.v[2] - tri.v[0]));
          g->tris.push_back(tri);
          used = true;
        }
        if (used) g->chunks.push_back(std::move(c));
        if (g->budget.max_triangles != 0 && g->tris.size() > g->budget.max_triangles) {
          g->stopped = g->budget.Exceeded();
          return g->stopped;
        }
      }
  if (stats) {
    stats->chunks_visited += visited;
    stats->cache_builds += builds;
    stats->tree_nodes_visited += kd.nodes_visited;
  }
  return absl::OkStatus();
}

MoveScope::Buffers& MoveScope::LocalBuffers() {
  thread_local Buffers buffers;
  return buffers;
}

MoveScope::MoveScope(const BroadphaseIndex& index, ChunkCollisionCache& cache, const Aabb& box,
                     QueryStats* stats)
    : index_(index), box_(box) {
  if (!GatherCacheForTesting() || active_move != nullptr) return;
  Buffers& b = LocalBuffers();
  b.gathered.Clear();
  b.gathered.budget.max_triangles = kMaxTriangles;
  if (!Gather(index, cache, box, false, &b.gathered, stats).ok()) {
    b.gathered.chunks.clear();
    return;  // the queries gather alone
  }
  const std::vector<Tri>& tris = b.gathered.tris;
  b.bounds.clear();
  for (const Tri& t : tris) {  // as KdTree::CollideAabb tests them (TriangleBounds)
    b.bounds.push_back({Min(t.v[0], Min(t.v[1], t.v[2])), Max(t.v[0], Max(t.v[1], t.v[2]))});
  }
  // Each cached chunk's box is the union of its gathered triangles' bounds, not the chunk's own
  // triangle box (ChunkPreview): it holds only the triangles inside the move's box, so it is
  // tighter, and it is read from memory the loop has just written.
  for (size_t i = 0; i < tris.size();) {
    Aabb bounds = b.bounds[i];
    size_t j = i + 1;
    for (; j < tris.size() && tris[j].chunk == tris[i].chunk; ++j) {
      bounds = Union(bounds, b.bounds[j]);
    }
    b.chunks.push_back(
        {std::move(b.gathered.chunks[b.chunks.size()]), uint32_t(i), uint32_t(j), bounds});
    i = j;
  }
  b.gathered.chunks.clear();
  b.memo_count = 0;
  buffers_ = &b;
  active_move = this;
}

const MoveScope* MoveScope::Active(const BroadphaseIndex& index) {
  const MoveScope* c = active_move;
  return c != nullptr && &c->index_ == &index ? c : nullptr;
}

int MoveScope::RecallCell(const Int3& cell) const {
  if (buffers_ == nullptr) return -1;
  for (int i = 0; i < buffers_->memo_count; ++i) {
    if (buffers_->memo_cells[i] == cell) return buffers_->memo_facts[i];
  }
  return -1;
}

void MoveScope::RememberCell(const Int3& cell, uint8_t fact) const {
  if (buffers_ == nullptr) return;
  Buffers& b = *buffers_;
  const int slot = b.memo_count < kMemoCells ? b.memo_count++ : int(cell.x & (kMemoCells - 1));
  b.memo_cells[slot] = cell;
  b.memo_facts[slot] = fact;
}

MoveScope::~MoveScope() {
  if (buffers_ == nullptr) return;
  buffers_->chunks.clear();  // no chunk outlives the move
  active_move = nullptr;
}

bool MoveScope::Covers(const BroadphaseIndex& index, const Aabb& box) const {
  return &index == &index_ && box.min.x >= box_.min.x && box.min.y >= box_.min.y &&
         box.min.z >= box_.min.z && box.max.x <= box_.max.x && box.max.y <= box_.max.y &&
         box.max.z <= box_.max.z;
}

// The steps of Gather on the cached chunks: a chunk and a triangle outside `box` were gathered
// here only because the scope's box is larger, and are skipped by the same tests; the kD-tree
// reports a chunk's triangles in the same order for any box, so the order is Gather's own. A
// chunk is skipped by its triangles' bounds rather than Gather's range of chunk keys: none of
// its triangles overlaps `box` when their union does not, so the same triangles come out.
absl::Status MoveScope::GatherFrom(const Aabb& box, bool dedupe, Gathered* g) const {
  const World& world = index_.world();
  const std::vector<Tri>& tris = buffers_->gathered.tris;
  for (const Chunk& c : buffers_->chunks) {
    if (!c.bounds.Overlaps(box) || ChunkMisses(world, g->reach, c.collision->key)) continue;
    if (g->Interrupted()) return g->stopped;
    const bool in_reach = ChunkInsideReach(world, g->reach, c.collision->key);
    bool used = false;
    SeenTriangles::ChunkBits seen = g->seen.For(*c.collision);
    for (uint32_t i = c.begin; i < c.end; ++i) {
      // FirstTime last: it is asked only about a triangle that is then kept.
      if (!buffers_->bounds[i].Overlaps(box) || !InReach(tris[i], in_reach, *g) ||
          (dedupe && !seen.FirstTime(tris[i].index))) {
        continue;
      }
      g->tris.push_back(tris[i]);
      used = true;
    }
    if (used) g->chunks.push_back(c.collision);
    if (g->budget.max_triangles != 0 && g->tris.size() > g->budget.max_triangles) {
      g->stopped = g->budget.Exceeded();
      return g->stopped;
    }
  }
  return absl::OkStatus();
}

ShapeQueryScratch& LocalScratch() {
  thread_local ShapeQueryScratch scratch;
  return scratch;
}

}  // namespace voxcol::terrain
