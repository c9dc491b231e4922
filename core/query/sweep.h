// Sweep: moves a convex shape along a straight line and reports where it first meets the
// terrain's smooth surface (or any hit, or all of them).
//
// The terrain is one-sided: triangles face empty space, and a shape behind a triangle is inside
// the solid. Sweeps only stop at triangles they move into. Triangles are gathered box after box
// along the path (at most a chunk's length each) and cast with the closed form for spheres and
// GJK-raycast for other shapes (core/narrowphase); hit normals on internal edges take the face
// normal (active_edges.h).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/narrowphase/support.h"
#include "core/query/query_types.h"

namespace voxcol {

struct SweepInput {
  PosedShape shape;    // start pose
  Vec3 direction;      // non-zero; normalized internally
  float distance = 0;  // world units along the normalized direction, > 0
};

struct SweepSettings {
  HitCollection collection = HitCollection::kClosest;
  // A start pose penetrating deeper than this (world units) is reported as an initial overlap
  // instead of being swept. Shallower touching contacts block only motion into them, so a shape
  // resting on the ground can slide along it.
  float overlap_tolerance = 1e-3f;
  uint32_t max_hits = 1024;  // kAll: the nearest this many are kept
  // Optional: stops the query early (result status DEADLINE_EXCEEDED or CANCELLED).
  const QueryInterrupt* interrupt = nullptr;
  QueryBudget budget;  // past it: result status RESOURCE_EXHAUSTED
};

// One place the swept shape meets the terrain.
struct SweepHit {
  float distance = 0;  // world units moved along the normalized direction before the contact
  Vec3 position;       // world units: contact point on the terrain surface
  Vec3 normal;         // unit, from the terrain toward the shape
  uint8_t material = 0;
  ChunkKey chunk;         // chunk whose mesh holds the triangle
  int32_t triangle = -1;  // triangle index in that chunk's mesh
};

struct SweepResult {
  bool hit = false;
  // The start pose already penetrates the terrain by more than overlap_tolerance: hit is true,
  // first.distance 0, and `penetration` is the way out, from the deepest contact; for a shape
  // buried without touching the surface, from the nearest surface along the six axes.
  bool initial_overlap = false;
  Penetration penetration;      // only with initial_overlap
  SweepHit first;               // the hit (kClosest: nearest; kAny: one of them)
  std::vector<SweepHit> hits;   // kAll: every hit, nearest first (first == hits[0])
  bool hits_truncated = false;  // kAll: more than max_hits
  // OK, or the error of a chunk that could not be loaded (DATA_LOSS for a corrupt record), or
  // DEADLINE_EXCEEDED / CANCELLED from settings.interrupt; the other fields then mean nothing.
  absl::Status load_status;

  void Clear();
};

// Casts `input.shape` along the sweep. Precondition: ValidateSweep (validate.h) is OK.
void Sweep(const BroadphaseIndex& index, ChunkCollisionCache& cache, const SweepInput& input,
           const SweepSettings& settings, SweepResult* result, QueryStats* stats = nullptr);

}  // namespace voxcol
