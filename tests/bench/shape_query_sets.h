// Query sets of the terrain shape-query benchmarks on the cave world, shared by ours
// (bench_shape_query.cc) and the Bullet peers (bench_shape_peers.cc) so both answer identical
// inputs. Each set is generated once per process (function-local statics of inline functions are
// one object across translation units).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/sweep.h"
#include "tests/bench/bench_scenes.h"

namespace voxcol::bench {

constexpr int kShapeQueries = 1024;  // per set; a power of two so the loops can mask

inline Vec3 RandomDirection(std::mt19937& rng) {
  std::normal_distribution<float> n;
  for (;;) {
    Vec3 d{n(rng), n(rng), n(rng)};
    if (LengthSq(d) > 1e-6f) return Normalize(d);
  }
}

inline Quat RandomRotation(std::mt19937& rng) {
  std::uniform_real_distribution<float> angle(0, 6.2831853f);
  return Quat::FromAxisAngle(RandomDirection(rng), angle(rng));
}

// Sweeps of `shape` from random open points (the shape at its start pose does not touch the
// solid, by the exact overlap test) in random directions, 16 voxels long, random orientations.
// `shape` must outlive the returned sweeps.
inline std::vector<SweepInput> MakeSweeps(const ConvexShape* shape, uint32_t seed) {
  const World& world = BenchCaveWorld();
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  std::vector<SweepInput> sweeps;
  std::mt19937 rng(seed);
  const Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 4, b.max.x - 4), uy(b.min.y + 4, b.max.y - 4),
      uz(b.min.z + 4, b.max.z - 4);
  OverlapResult overlap;
  while (int(sweeps.size()) < kShapeQueries) {
    SweepInput in;
    in.shape = {shape, {RandomRotation(rng), {ux(rng), uy(rng), uz(rng)}}};
    Overlap(index, cache, in.shape, {}, &overlap);
    if (overlap.touches_solid) continue;
    in.direction = RandomDirection(rng);
    in.distance = 16 * world.voxel_size();
    sweeps.push_back(in);
  }
  return sweeps;
}

// `shape` resting on the terrain's top surface sunk by 0.05 voxel: surface points from smooth
// raycasts straight down from the sky, ground no steeper than 45 degrees; the shape's lowest point
// (`bottom` below its centre, unrotated) goes there. Random rotations about the vertical axis.
// `shape` must outlive the returned poses.
inline std::vector<PosedShape> MakeRestingPoses(const ConvexShape* shape, float bottom,
                                                uint32_t seed) {
  const World& world = BenchCaveWorld();
  const BroadphaseIndex& index = BenchCaveIndex();
  ChunkCollisionCache& cache = BenchCaveCache();
  std::vector<PosedShape> poses;
  std::mt19937 rng(seed);
  const Aabb b = world.world_bounds();
  std::uniform_real_distribution<float> ux(b.min.x + 4, b.max.x - 4), uz(b.min.z + 4, b.max.z - 4),
      angle(0, 6.2831853f);
  const float sink = 0.05f * world.voxel_size();
  while (int(poses.size()) < kShapeQueries) {
    RaycastInput ray{{ux(rng), b.max.y - 1, uz(rng)}, {0, -1, 0}, b.max.y - b.min.y - 2};
    RaycastHit hit = Raycast(index, cache, ray, RaycastSettings{});
    if (!hit.hit || hit.started_inside || hit.normal.y < 0.7071f) continue;
    Vec3 center = hit.position + Vec3{0, bottom - sink, 0};
    poses.push_back({shape, {Quat::FromAxisAngle({0, 1, 0}, angle(rng)), center}});
  }
  return poses;
}

// The shapes of the benchmarks (world units; the cave world has 1 unit voxels).
inline const ConvexShape& BenchSphere() {  // radius 0.5
  static const ConvexShape shape = MakeSphere(0.5f);
  return shape;
}
inline const ConvexShape& BenchCapsule() {  // half height 0.9, radius 0.4
  static const ConvexShape shape = MakeCapsule(0.9f, 0.4f);
  return shape;
}
inline const ConvexShape& BenchBox() {  // half extents 0.5, sharp
  static const ConvexShape shape = MakeBox({0.5f, 0.5f, 0.5f});
  return shape;
}

// The four query sets (seeds as before the sets were shared).
inline const std::vector<SweepInput>& SphereSweepSet() {
  static const std::vector<SweepInput> sweeps = MakeSweeps(&BenchSphere(), 11);
  return sweeps;
}
inline const std::vector<SweepInput>& CapsuleSweepSet() {
  static const std::vector<SweepInput> sweeps = MakeSweeps(&BenchCapsule(), 12);
  return sweeps;
}
inline const std::vector<PosedShape>& CapsuleRestingSet() {
  static const std::vector<PosedShape> poses = MakeRestingPoses(&BenchCapsule(), 0.9f + 0.4f, 21);
  return poses;
}
inline const std::vector<PosedShape>& BoxRestingSet() {
  static const std::vector<PosedShape> poses = MakeRestingPoses(&BenchBox(), 0.5f, 22);
  return poses;
}

}  // namespace voxcol::bench
