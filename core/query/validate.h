// Input validation for every world query, in one place. Each check returns INVALID_ARGUMENT with
// a message that starts with the offending field as the API spells it (e.g. "direction",
// "shape.position", "box.half_extents.x"), so the server passes it on unchanged. The query
// functions assume their check passed.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/broadphase/probe.h"
#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/raycast.h"
#include "core/query/sweep.h"
#include "core/voxel/world.h"

namespace voxcol {

// Server-side limits on queries, configured by flags.
struct QueryLimits {
  float max_ray_distance = 4096.0f;    // world units (--max_ray_distance)
  float max_shape_extent = 64.0f;      // largest half extent of a shape's bounds, probe size and
                                       // contact margin, world units (--max_overlap_extent)
  float max_sweep_distance = 4096.0f;  // world units (--max_sweep_distance)
  uint32_t max_sweep_hits = 1024;      // most hits one kAll sweep returns
  uint32_t max_probe_voxels = 65536;   // most touched voxels one probe returns
  // Work budget of one Sweep, Overlap or Contacts: terrain triangles gathered (QueryBudget; 0: no
  // limit) (--max_query_triangles).
  uint32_t max_query_triangles = kDefaultMaxQueryTriangles;
};

// Origin finite and inside the world, direction finite and non-zero (of any length: it is
// normalized in place, in double), max_distance in (0, limits.max_ray_distance].
absl::Status ValidateRaycast(const World& world, RaycastInput* ray, const QueryLimits& limits);

// Centre finite and inside the world, sizes finite, >= 0 and <= limits.max_shape_extent,
// settings.max_voxels <= limits.max_probe_voxels. Fields: box.center, box.half_extents.x|y|z,
// sphere.center, sphere.radius, max_voxels.
absl::Status ValidateProbe(const World& world, const ProbeShape& shape,
                           const ProbeSettings& settings, const QueryLimits& limits);

// A posed shape: sizes > 0 (a capsule's half height >= 0) and bounded by limits.max_shape_extent,
// 1..64 hull points, a finite position inside the world and a unit rotation (length within 1e-3
// of 1), which is then normalized in place so queries see an exact rotation. Fields are named
// `prefix` + the API's path (shape.sphere.radius, position, rotation, ...), e.g. prefix "shape.".
absl::Status ValidatePosedShape(const World& world, PosedShape* shape, const QueryLimits& limits,
                                const std::string& prefix);

// The shape (prefix "shape."), a finite non-zero direction (normalized in place, as for rays) and a
// distance in
// (0, limits.max_sweep_distance]; caps settings->max_hits at limits.max_sweep_hits.
absl::Status ValidateSweep(const World& world, SweepInput* input, SweepSettings* settings,
                           const QueryLimits& limits);

// The shape (prefix "shape.").
absl::Status ValidateOverlap(const World& world, PosedShape* shape, const QueryLimits& limits);

// The shape (prefix "shape.") and a margin finite, >= 0 and <= limits.max_shape_extent.
absl::Status ValidateContacts(const World& world, PosedShape* shape,
                              const ContactsSettings& settings, const QueryLimits& limits);

}  // namespace voxcol
