// Contacts: the contact manifolds of a posed convex shape with the terrain's smooth surface, and
// its water contact (buoyancy).
//
// Per touched chunk at most four points spanning the largest contact area. Contacts always push
// toward the triangles' front (empty space); internal edges take the face normal
// (active_edges.h), and a box or capsule lying on a face reports the clipped face (corners, both
// capsule ends) rather than one closest point.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/narrowphase/contact_manifold.h"
#include "core/narrowphase/support.h"
#include "core/query/query_types.h"
#include "core/query/water_contact.h"

namespace voxcol {

// One contact point of a shape with the terrain.
struct Contact {
  Vec3 position;    // world units, on the terrain surface
  Vec3 normal;      // unit, from the terrain toward the shape
  float depth = 0;  // world units: > 0 penetration; negative: separated by that much (margin)
  uint8_t material = 0;
  int32_t triangle = -1;  // triangle index in the chunk's mesh
};

// At most four points of one chunk, chosen to span the largest contact area (ReduceContacts).
struct ChunkContacts {
  ChunkKey chunk;
  int count = 0;
  Contact points[kMaxManifoldPoints];
};

struct ContactsSettings {
  // Report points separated by up to this distance (world units, >= 0) as speculative contacts
  // with negative depth.
  float margin = 0;
  bool water = true;  // compute WaterContact
  // Optional: stops the query early (result status DEADLINE_EXCEEDED or CANCELLED).
  const QueryInterrupt* interrupt = nullptr;
  QueryBudget budget;  // past it: result status RESOURCE_EXHAUSTED
};

struct ContactsResult {
  std::vector<ChunkContacts> chunks;  // one per chunk with contacts, chunks in Y, Z, X order
  // The shape's centre is inside the solid with no surface point within reach: the shape is
  // buried, and `penetration` is the way out along the nearest of the six axes (its position is
  // the shape's centre).
  bool buried = false;
  Penetration penetration;  // only when buried
  WaterContact water;
  absl::Status load_status;  // as SweepResult::load_status

  void Clear();
  int total_points() const;
};

// Contact manifolds of a posed shape with the terrain, and its water contact.
// Precondition: ValidateContacts (validate.h) is OK.
void Contacts(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& shape,
              const ContactsSettings& settings, ContactsResult* result,
              QueryStats* stats = nullptr);

}  // namespace voxcol
