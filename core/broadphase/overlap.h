// Broadphase queries: could a box, sphere or sweep touch terrain geometry, and where.
//
// Precision: the answer is the chunk masks' (the dilated occupancy, see chunk_masks.h), after
// growing the query by one voxel as in the Roblox design. "Touches" therefore means "the mesher
// may put geometry within reach"; exact shape overlap is the narrowphase's job. A query never
// misses geometry; it may report some that the exact test would reject.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/geometry/vec3.h"

namespace voxcol {

struct OverlapSettings {
  bool collect_chunks = false;  // fill OverlapResult::chunks
  uint32_t max_voxels = 0;      // collect up to this many touched voxels; 0 collects none
};

struct TouchedChunk {
  ChunkKey key;
  uint8_t classes = 0;  // MaskClass bits touched in this chunk
};
struct TouchedVoxel {
  Int3 voxel;           // world voxel coordinates
  uint8_t classes = 0;  // MaskClass bits set for this voxel
};

// Output of the overlap queries. Reuse one across queries: Clear keeps the vectors' capacity, so
// a warmed-up result makes queries allocation-free.
struct OverlapResult {
  bool touches_solid = false;
  bool touches_water = false;
  std::vector<TouchedChunk> chunks;  // in Y, Z, X order of chunk keys; only with collect_chunks
  std::vector<TouchedVoxel> voxels;  // at most max_voxels, in Y, Z, X order within each chunk
  bool voxels_truncated = false;     // more voxels were touched than max_voxels
  uint32_t chunks_visited = 0;       // chunks whose record was read (cost)

  void Clear();
};

// A query shape: an axis-aligned box or a sphere, in world units.
struct OverlapShape {
  bool is_sphere = false;
  Vec3 center;        // world units
  Vec3 half_extents;  // box only: world units, each >= 0
  float radius = 0;   // sphere only: world units, >= 0

  // The box the broadphase tests: the box itself, or the sphere's bounding box.
  Aabb Bounds() const;
};

// Server-side limits on overlap queries, configured by flags.
struct OverlapLimits {
  float max_extent = 64.0f;     // largest half extent or radius, world units
  uint32_t max_voxels = 65536;  // most touched voxels one query may return
};

// Checks a shape and settings; the message names the field as the API spells it (box.center,
// box.half_extents, sphere.center, sphere.radius, max_voxels). The centre must be inside the world.
absl::Status ValidateOverlap(const World& world, const OverlapShape& shape,
                             const OverlapSettings& settings, const OverlapLimits& limits);

// Voxels a world-space box covers at broadphase precision: every voxel whose closed cell meets
// the closed box, grown by one voxel on every side, clipped to the world. Max exclusive; may be
// empty when the box lies outside the world. Precondition: box finite with min <= max.
IntBox OverlapVoxelRange(const World& world, const Aabb& box);

// Adds to `result` what the voxel box `voxels` (world voxel coordinates, max exclusive, inside
// the world) touches according to the masks. Does not clear `result`. Stops early once both
// classes are found unless chunks or voxels are being collected.
void OverlapVoxels(const BroadphaseIndex& index, const IntBox& voxels,
                   const OverlapSettings& settings, OverlapResult* result);

// Box query in world units. Clears `result` first.
void OverlapAabb(const BroadphaseIndex& index, const Aabb& box, const OverlapSettings& settings,
                 OverlapResult* result);

// Box or sphere query. Clears `result` first. Precondition: ValidateOverlap is OK.
void Overlap(const BroadphaseIndex& index, const OverlapShape& shape,
             const OverlapSettings& settings, OverlapResult* result);

// Sphere query (world units). Conservative: answered for the sphere's bounding box, which at
// broadphase precision (masks grown by one voxel) differs only near the box corners.
void OverlapSphere(const BroadphaseIndex& index, const Vec3& center, float radius,
                   const OverlapSettings& settings, OverlapResult* result);

struct SweepResult {
  bool touches_solid = false;
  bool touches_water = false;
  // Fraction of the displacement (0..1) where the first step touching each class begins: a lower
  // bound on the time of first contact. 1 when not touched.
  float solid_fraction = 1.0f;
  float water_fraction = 1.0f;
  uint32_t steps = 0;  // boxes tested (cost)
};

// Largest number of steps a sweep is split into; longer sweeps take longer (still conservative)
// steps.
constexpr uint32_t kMaxSweepSteps = 4096;

// Swept box: `box` (world units) translated by `displacement` (world units). Conservative: the
// sweep is split into steps moving at most one voxel along every axis, and each step is tested as
// the bounding box of its start and end boxes, which contains everything the moving box covers
// during that step.
SweepResult SweepAabb(const BroadphaseIndex& index, const Aabb& box, const Vec3& displacement);

}  // namespace voxcol
