// The broadphase probe: may a box or sphere touch terrain geometry, and where?
//
// Conservative by contract: the answer is the chunk masks' (the dilated occupancy, see
// chunk_masks.h), after growing the query by one voxel as in the Roblox design. "May touch" means
// "the mesher may put geometry within reach". A probe never misses geometry; it may report some
// that the exact test would reject. The exact test of a posed shape is Overlap
// (core/query/overlap.h).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/geometry/vec3.h"

namespace voxcol {

struct ProbeSettings {
  bool collect_chunks = false;  // fill ProbeResult::chunks
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

// Output of the probes. Reuse one across queries: Clear keeps the vectors' capacity, so
// a warmed-up result makes queries allocation-free.
struct ProbeResult {
  bool may_touch_solid = false;      // solid geometry may be within reach
  bool may_touch_water = false;      // water may be within reach
  std::vector<TouchedChunk> chunks;  // in Y, Z, X order of chunk keys; only with collect_chunks
  std::vector<TouchedVoxel> voxels;  // at most max_voxels, in Y, Z, X order within each chunk
  bool voxels_truncated = false;     // more voxels were touched than max_voxels
  uint32_t chunks_visited = 0;       // chunks whose record was read (cost)

  void Clear();
};

// A query shape: an axis-aligned box or a sphere, in world units.
struct ProbeShape {
  bool is_sphere = false;
  Vec3 center;        // world units
  Vec3 half_extents;  // box only: world units, each >= 0
  float radius = 0;   // sphere only: world units, >= 0

  // The box the broadphase tests: the box itself, or the sphere's bounding box.
  Aabb Bounds() const;
};

// Voxels a world-space box covers at broadphase precision: every voxel whose closed cell meets
// the closed box, grown by one voxel on every side, clipped to the world. Max exclusive; may be
// empty when the box lies outside the world. Precondition: box finite with min <= max.
IntBox ProbeVoxelRange(const World& world, const Aabb& box);

// Adds to `result` what the voxel box `voxels` (world voxel coordinates, max exclusive, inside
// the world) touches according to the masks. Does not clear `result`. Stops early once both
// classes are found unless chunks or voxels are being collected.
void ProbeVoxels(const BroadphaseIndex& index, const IntBox& voxels, const ProbeSettings& settings,
                 ProbeResult* result);

// Box query in world units. Clears `result` first.
void ProbeAabb(const BroadphaseIndex& index, const Aabb& box, const ProbeSettings& settings,
               ProbeResult* result);

// Box or sphere query. Clears `result` first. Precondition: ValidateProbe (core/query/validate.h)
// is OK.
void Probe(const BroadphaseIndex& index, const ProbeShape& shape, const ProbeSettings& settings,
           ProbeResult* result);

// Sphere query (world units). Conservative: answered for the sphere's bounding box, which at
// broadphase precision (masks grown by one voxel) differs only near the box corners.
void ProbeSphere(const BroadphaseIndex& index, const Vec3& center, float radius,
                 const ProbeSettings& settings, ProbeResult* result);

}  // namespace voxcol
