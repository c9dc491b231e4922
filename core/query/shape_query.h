// Convex shapes against the smooth terrain surface: sweeps (shape casts), exact overlaps and
// contact manifolds with water buoyancy.
//
// All three gather the marching-cubes triangles near the shape through the same path as the smooth
// raycast: mesh chunks whose broadphase record may hold solid, each chunk's kD-tree queried with a
// box (core/kdtree), triangles tested with the closed forms for spheres and capsules and GJK / EPA
// / GJK-raycast for other shapes (core/narrowphase).
//
// The terrain is one-sided: triangles face empty space (counter-clockwise seen from outside), and
// a shape behind a triangle is inside the solid. Contacts therefore always push toward the
// triangle's front; sweeps only stop at triangles they move into.
//
// Internal edges: a convex shape resting on flat ground touches several triangles, and where it
// overlaps one only near that triangle's edge the closest-feature normal would point sideways. A
// contact on an edge (or vertex) whose neighbouring triangle continues the surface flat or
// concave is not a real edge of the solid; such contacts take the triangle's face normal, as in
// Jolt's active edges and Bullet's btAdjustInternalEdgeContacts. Neighbours are found across chunk
// seams too, by the vertices' global fixed-point coordinates (bit-identical on both sides).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/broadphase/overlap.h"
#include "core/cache/narrowphase_cache.h"
#include "core/narrowphase/contact_manifold.h"
#include "core/narrowphase/support.h"
#include "core/query/raycast.h"

namespace voxcol {

// Server-side limits on shape queries, configured by flags (see ValidateShapeQuery).
struct ShapeQueryLimits {
  float max_extent = 64.0f;            // largest half extent of a shape's bounding box, world units
  float max_sweep_distance = 4096.0f;  // world units
  uint32_t max_hits = 1024;            // most hits one kAll sweep may return
};

// Checks a posed shape: finite pose with a unit-length rotation (within 1e-3), centre inside the
// world, sizes > 0 and bounded by limits.max_extent, hull point counts. Messages name the field as
// `prefix` + the core field (radius, half_height, half_extents, convex_radius, points, position,
// rotation), so the server can pass the API's spelling.
absl::Status ValidatePosedShape(const World& world, const PosedShape& shape,
                                const ShapeQueryLimits& limits, const std::string& prefix = "");

enum class HitCollection : uint8_t {
  kClosest,  // the first hit along the sweep
  kAny,      // some hit, the cheapest found (existence tests)
  kAll,      // every triangle hit, nearest first
};

struct ShapeSweepInput {
  PosedShape shape;    // start pose
  Vec3 direction;      // non-zero; normalized internally
  float distance = 0;  // world units along the normalized direction, > 0
};

struct ShapeSweepSettings {
  HitCollection collection = HitCollection::kClosest;
  // A start pose penetrating deeper than this (world units) is reported as an initial overlap
  // instead of being swept. Shallower touching contacts block only motion into them, so a shape
  // resting on the ground can slide along it.
  float overlap_tolerance = 1e-3f;
  uint32_t max_hits = 1024;  // kAll: the nearest this many are kept
};

// One place the swept shape meets the terrain.
struct ShapeHit {
  float distance = 0;  // world units moved along the normalized direction before the contact
  Vec3 position;       // contact point on the terrain surface
  Vec3 normal;         // unit, from the terrain toward the shape
  uint8_t material = 0;
  ChunkKey chunk;         // chunk whose mesh holds the triangle
  int32_t triangle = -1;  // triangle index in that chunk's mesh
};

struct ShapeSweepResult {
  bool hit = false;
  // The start pose already penetrates the terrain by more than overlap_tolerance: hit is true,
  // distance 0, and depth / normal give the minimum translation (depth * normal) out of it, from
  // the deepest contact; for a shape buried without touching the surface, from the nearest
  // surface along the six axes.
  bool initial_overlap = false;
  float depth = 0;
  ShapeHit first;               // the hit (kClosest: nearest; kAny: one of them)
  std::vector<ShapeHit> hits;   // kAll: every hit, nearest first (first == hits[0])
  bool hits_truncated = false;  // kAll: more than max_hits
  // OK, or the error of a chunk that could not be loaded (DATA_LOSS for a corrupt record); the
  // other fields then mean nothing.
  absl::Status load_status;

  void Clear();
};

// Casts `input.shape` along the sweep. Precondition: ValidatePosedShape is OK, direction finite
// and non-zero, distance finite and > 0.
void SweepShape(const BroadphaseIndex& index, NarrowphaseCache& cache, const ShapeSweepInput& input,
                const ShapeSweepSettings& settings, ShapeSweepResult* result,
                QueryStats* stats = nullptr);

// One contact point of a shape with the terrain.
struct TerrainContact {
  Vec3 position;    // on the terrain surface
  Vec3 normal;      // unit, from the terrain toward the shape
  float depth = 0;  // penetration (negative: separated by that much, within the margin)
  uint8_t material = 0;
  int32_t triangle = -1;
};

// At most four points per chunk, chosen to span the largest contact area (ReduceContacts).
struct ChunkManifold {
  ChunkKey chunk;
  int count = 0;
  TerrainContact points[kMaxManifoldPoints];
};

// The shape's contact with water, from the water voxels' occupancy (a water voxel is filled from
// its bottom to occupancy / 255 of its height, or to the top when water lies above it).
struct WaterContact {
  bool in_water = false;
  float submerged_fraction = 0;  // 0..1 of the shape's volume
  float submerged_volume = 0;    // world units^3
  float surface_height = 0;      // world Y of the highest water surface over the shape
  Vec3 center_of_buoyancy;       // centroid of the submerged part (valid when in_water)
};

struct ContactSettings {
  // Report points separated by up to this distance (world units, >= 0) as speculative contacts
  // with negative depth.
  float margin = 0;
  bool water = true;  // compute WaterContact
};

struct ContactResult {
  std::vector<ChunkManifold> manifolds;  // one per chunk with contacts, chunks in Y, Z, X order
  // The shape's centre is inside the solid with no surface point within reach: the shape is
  // buried. depth / normal then give the way out along the nearest of the six axes.
  bool buried = false;
  float buried_depth = 0;
  Vec3 buried_normal;
  WaterContact water;
  absl::Status load_status;  // as ShapeSweepResult::load_status

  void Clear();
  int total_points() const;
};

// Contact manifolds of a posed shape with the terrain, and its water contact.
// Precondition: ValidatePosedShape is OK; settings.margin finite and >= 0.
void ShapeContacts(const BroadphaseIndex& index, NarrowphaseCache& cache, const PosedShape& shape,
                   const ContactSettings& settings, ContactResult* result,
                   QueryStats* stats = nullptr);

struct ShapeOverlapResult {
  bool touches_solid = false;        // the shape penetrates (or is buried in) the solid
  bool touches_water = false;        // part of its volume is under water
  std::vector<TouchedChunk> chunks;  // chunks with a touch (classes kClassSolid / kClassWater)
  // With want_penetration, when touches_solid: the deepest penetration (depth * normal moves the
  // shape out; position on the terrain).
  float depth = 0;
  Vec3 normal;
  Vec3 position;
  absl::Status load_status;

  void Clear();
};

// Exact overlap of a posed shape with the terrain. Precondition: ValidatePosedShape is OK.
void OverlapPosedShape(const BroadphaseIndex& index, NarrowphaseCache& cache,
                       const PosedShape& shape, bool want_penetration, ShapeOverlapResult* result,
                       QueryStats* stats = nullptr);

}  // namespace voxcol
