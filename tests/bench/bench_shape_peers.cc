// Bullet peers of the terrain shape-query benchmarks (bench_shape_query.cc): the same query sets
// (shape_query_sets.h) on the same marching-cubes triangles, answered by Bullet 3 as a Bullet user
// would: a btCollisionWorld (btDbvtBroadphase) with one static btCollisionObject per non-empty
// chunk mesh, each a btBvhTriangleMeshShape (quantized BVH) over the chunk's decoded float
// vertices and its 16-bit indices; sweeps by convexSweepTest with a ClosestConvexResultCallback,
// contacts by contactTest with a ContactResultCallback.
//
// Setup (not timed): the Bullet world is built once per process and shared by the four
// benchmarks. It holds every chunk whose mesh can hold a triangle inside the bounding box of some
// query of the four sets (the swept box of a sweep, the posed box of a contact query, grown by one
// voxel), so no query can reach terrain the world lacks; chunks no query can reach are not meshed,
// to keep the CI smoke run fast. The meshes come from MeshChunk on the same world with the same
// voxel size as ChunkCollisionCache builds them, so the triangles are the ones our queries test.
//
// Margins: Bullet's sphere and capsule are their full radius as margin (the exact shapes, no
// extra skin). btBoxShape keeps its outer half extents under any margin and rounds the edges by
// it; the default 0.04 margin is set to 0 so it is the same sharp box as ours. The triangle mesh
// margin is Bullet's default 0 for concave shapes. Bullet's triangles are two-sided, ours
// one-sided (see core/query/sweep.h); the start poses of the sweeps are in open space and
// the contact poses rest on the top surface, so both meet the same front faces.
//
// agree_ratio (sweeps): the fraction of the query set on which both miss or both hit at distances
// within 0.05 voxel; ours are computed once in setup. max_hit_diff: the largest difference of the
// two distances over the queries both hit, in voxels. Contacts are not expected to agree in count:
// Bullet reports one point per touching triangle (no manifold reduction), ours at most four per
// chunk; touch_ratio (a query with at least one point) is comparable.
#include <benchmark/benchmark.h>
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "core/mesh/marching_cubes.h"
#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/sweep.h"
#include "tests/bench/bench_scenes.h"
#include "tests/bench/bullet_mesh.h"
#include "tests/bench/shape_query_sets.h"

namespace voxcol::bench {
namespace {

constexpr int kQueries = kShapeQueries;

btVector3 Bt(const Vec3& v) { return {v.x, v.y, v.z}; }
btTransform Bt(const RigidTransform& t) {
  const Quat& q = t.rotation;
  return btTransform(btQuaternion(q.x, q.y, q.z, q.w), Bt(t.translation));
}

// Radius of a sphere about the shape's centre that holds it.
float BoundingRadius(const ConvexShape& shape) {
  const Aabb b = shape.LocalBounds();
  return std::max(Length(b.min), Length(b.max));
}

struct BulletTerrain {
  // Chunk data first: the world below refers to it and is destroyed first.
  std::vector<ChunkMesh> meshes;
  std::vector<std::vector<Vec3>> vertices;  // decoded, world units
  std::vector<std::unique_ptr<btTriangleIndexVertexArray>> arrays;
  std::vector<std::unique_ptr<btBvhTriangleMeshShape>> shapes;
  std::vector<std::unique_ptr<btCollisionObject>> objects;
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btCollisionWorld world{&dispatcher, &broadphase, &config};
  size_t triangles = 0;
  double build_seconds = 0;
};

// Marks the chunks whose meshes may hold a triangle inside `box` (world units). A mesh of chunk K
// spans [8K + 0.5, 8K + 8.5] voxels per axis.
void MarkChunks(const World& world, const IntBox& range, const Aabb& box, std::vector<bool>* mark) {
  const float h = world.voxel_size();
  const Int3 size = range.max - range.min;
  auto lo = [&](float v) { return int(std::floor((v / h - 0.5f - kChunkSize) / kChunkSize)); };
  auto hi = [&](float v) { return int(std::floor((v / h - 0.5f) / kChunkSize)); };
  for (int z = std::max(lo(box.min.z), range.min.z); z <= std::min(hi(box.max.z), range.max.z - 1);
       ++z)
    for (int y = std::max(lo(box.min.y), range.min.y);
         y <= std::min(hi(box.max.y), range.max.y - 1); ++y)
      for (int x = std::max(lo(box.min.x), range.min.x);
           x <= std::min(hi(box.max.x), range.max.x - 1); ++x)
        (*mark)[size_t(((z - range.min.z) * size.y + (y - range.min.y)) * size.x +
                       (x - range.min.x))] = true;
}

Aabb Around(const Vec3& c, float r) { return {c - Vec3(r, r, r), c + Vec3(r, r, r)}; }
Aabb Union(const Aabb& a, const Aabb& b) {
  return {{std::min(a.min.x, b.min.x), std::min(a.min.y, b.min.y), std::min(a.min.z, b.min.z)},
          {std::max(a.max.x, b.max.x), std::max(a.max.y, b.max.y), std::max(a.max.z, b.max.z)}};
}

BulletTerrain& GetBulletTerrain() {
  static BulletTerrain* const terrain = [] {
    for (const auto* set : {&SphereSweepSet(), &CapsuleSweepSet()}) benchmark::DoNotOptimize(set);
    for (const auto* set : {&CapsuleRestingSet(), &BoxRestingSet()}) benchmark::DoNotOptimize(set);
    auto start = std::chrono::steady_clock::now();  // bullet_setup_s: after our query sets exist
    auto* t = new BulletTerrain;
    const World& world = BenchCaveWorld();
    const float grow = world.voxel_size();
    const IntBox range = MeshedChunkRange(world);
    const Int3 size = range.max - range.min;
    std::vector<bool> mark(size_t(range.Volume()), false);
    for (const auto* set : {&SphereSweepSet(), &CapsuleSweepSet()})
      for (const SweepInput& in : *set) {
        const float r = BoundingRadius(*in.shape.shape) + grow;
        const Vec3 from = in.shape.pose.translation;
        const Vec3 to = from + Normalize(in.direction) * in.distance;
        MarkChunks(world, range, Union(Around(from, r), Around(to, r)), &mark);
      }
    for (const auto* set : {&CapsuleRestingSet(), &BoxRestingSet()})
      for (const PosedShape& p : *set)
        MarkChunks(world, range, Around(p.pose.translation, BoundingRadius(*p.shape) + grow),
                   &mark);

    ChunkMesh mesh;
    for (int z = range.min.z; z < range.max.z; ++z)
      for (int y = range.min.y; y < range.max.y; ++y)
        for (int x = range.min.x; x < range.max.x; ++x) {
          if (!mark[size_t(((z - range.min.z) * size.y + (y - range.min.y)) * size.x +
                           (x - range.min.x))])
            continue;
          const ChunkKey key{x, y, z};
          MeshChunk(GatherMeshSources(world, key), key, world.voxel_size(), &mesh);
          if (mesh.empty()) continue;
          t->triangles += mesh.triangle_count();
          std::vector<Vec3> decoded(mesh.vertex_count());
          for (uint32_t i = 0; i < mesh.vertex_count(); ++i) decoded[i] = mesh.Vertex(i);
          t->vertices.push_back(std::move(decoded));
          t->meshes.push_back(mesh);
        }
    // Views into the meshes once the vectors no longer move.
    for (size_t c = 0; c < t->meshes.size(); ++c) {
      const ChunkMesh& m = t->meshes[c];
      t->arrays.push_back(BulletMesh(m, t->vertices[c]));
      t->shapes.push_back(std::make_unique<btBvhTriangleMeshShape>(
          t->arrays.back().get(), /*useQuantizedAabbCompression=*/true));
      auto object = std::make_unique<btCollisionObject>();
      object->setCollisionShape(t->shapes.back().get());
      object->setCollisionFlags(object->getCollisionFlags() | btCollisionObject::CF_STATIC_OBJECT);
      t->world.addCollisionObject(object.get(), btBroadphaseProxy::StaticFilter,
                                  btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
      t->objects.push_back(std::move(object));
    }
    t->broadphase.optimize();
    t->build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return t;
  }();
  return *terrain;
}

void TerrainCounters(benchmark::State& state, const BulletTerrain& t) {
  state.counters["bullet_chunks"] = double(t.objects.size());
  state.counters["bullet_triangles"] = double(t.triangles);
  state.counters["bullet_setup_s"] = t.build_seconds;
}

// Bullet's shape for ours, same dimensions (margins: see the file comment).
std::unique_ptr<btConvexShape> BulletShape(const ConvexShape& s) {
  switch (s.type) {
    case ShapeType::kSphere:
      return std::make_unique<btSphereShape>(s.convex_radius);
    case ShapeType::kCapsule:  // Y axis, height between the cap centres = 2 * half_height
      return std::make_unique<btCapsuleShape>(s.convex_radius, 2 * s.half_height);
    case ShapeType::kBox: {
      auto box = std::make_unique<btBoxShape>(
          Bt(s.half_extents + Vec3(s.convex_radius, s.convex_radius, s.convex_radius)));
      box->setMargin(s.convex_radius);  // 0 for the bench box: sharp, outer extents unchanged
      return box;
    }
    default:
      return nullptr;  // not benchmarked
  }
}

struct BulletSweepPath {
  btTransform from, to;
  float distance;  // world units at fraction 1
};

// Closest-hit distance of a Bullet sweep, or -1 for no hit.
float BulletSweep(const btCollisionWorld& world, const btConvexShape& shape,
                  const BulletSweepPath& s) {
  btCollisionWorld::ClosestConvexResultCallback cb(s.from.getOrigin(), s.to.getOrigin());
  world.convexSweepTest(&shape, s.from, s.to, cb);
  return cb.hasHit() ? cb.m_closestHitFraction * s.distance : -1.0f;
}

void RunBulletSweeps(benchmark::State& state, const std::vector<SweepInput>& inputs) {
  BulletTerrain& t = GetBulletTerrain();
  const std::unique_ptr<btConvexShape> shape = BulletShape(*inputs[0].shape.shape);
  std::vector<BulletSweepPath> sweeps;
  for (const SweepInput& in : inputs) {
    btTransform from = Bt(in.shape.pose);
    btTransform to = from;
    to.setOrigin(from.getOrigin() + Bt(Normalize(in.direction) * in.distance));
    sweeps.push_back({from, to, in.distance});
  }
  // Setup: ours once over the set, then Bullet's (which also warms it), for agree_ratio.
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  SweepResult ours;
  const float tolerance = 0.05f * BenchCaveWorld().voxel_size();
  size_t agree = 0;
  float max_diff = 0;  // over the queries both hit
  for (int q = 0; q < kQueries; ++q) {
    Sweep(index, cache, inputs[q], SweepSettings{}, &ours);
    const float d = BulletSweep(t.world, *shape, sweeps[q]);
    agree += ours.hit ? d >= 0 && std::fabs(d - ours.first.distance) <= tolerance : d < 0;
    if (ours.hit && d >= 0) max_diff = std::max(max_diff, std::fabs(d - ours.first.distance));
  }
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const float d = BulletSweep(t.world, *shape, sweeps[i++ & (kQueries - 1)]);
    hits += d >= 0;
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
  state.counters["agree_ratio"] = double(agree) / kQueries;
  state.counters["max_hit_diff"] = max_diff / BenchCaveWorld().voxel_size();  // voxels
  TerrainCounters(state, t);
}

void BM_BulletSphereSweep(benchmark::State& state) { RunBulletSweeps(state, SphereSweepSet()); }
BENCHMARK(BM_BulletSphereSweep);

void BM_BulletCapsuleSweep(benchmark::State& state) { RunBulletSweeps(state, CapsuleSweepSet()); }
BENCHMARK(BM_BulletCapsuleSweep);

// Counts the reported points with distance <= 0 (touching or penetrating).
struct CountContacts : btCollisionWorld::ContactResultCallback {
  int points = 0;
  btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper*, int, int,
                           const btCollisionObjectWrapper*, int, int) override {
    points += cp.getDistance() <= 0;
    return 0;
  }
};

void RunBulletContacts(benchmark::State& state, const std::vector<PosedShape>& poses) {
  BulletTerrain& t = GetBulletTerrain();
  const std::unique_ptr<btConvexShape> shape = BulletShape(*poses[0].shape);
  std::vector<btTransform> transforms;
  for (const PosedShape& p : poses) transforms.push_back(Bt(p.pose));
  btCollisionObject object;
  object.setCollisionShape(shape.get());
  auto contacts = [&](const btTransform& pose) {
    object.setWorldTransform(pose);
    CountContacts cb;
    t.world.contactTest(&object, cb);
    return cb.points;
  };
  for (const btTransform& pose : transforms) benchmark::DoNotOptimize(contacts(pose));  // warm
  size_t i = 0, points = 0, touching = 0;
  for (auto _ : state) {
    const int n = contacts(transforms[i++ & (kQueries - 1)]);
    points += size_t(n);
    touching += n > 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["contacts_per_query"] = double(points) / double(state.iterations());
  state.counters["touch_ratio"] = double(touching) / double(state.iterations());
  TerrainCounters(state, t);
}

void BM_BulletCapsuleContacts(benchmark::State& state) {
  RunBulletContacts(state, CapsuleRestingSet());
}
BENCHMARK(BM_BulletCapsuleContacts);

void BM_BulletBoxContacts(benchmark::State& state) { RunBulletContacts(state, BoxRestingSet()); }
BENCHMARK(BM_BulletBoxContacts);

}  // namespace
}  // namespace voxcol::bench
