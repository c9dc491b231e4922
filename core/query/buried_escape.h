// A shape whose centre is buried in solid with no surface within reach: the way out. Internal to
// core/query.
#pragma once

#include "absl/status/status.h"
#include "core/query/terrain_triangles.h"

namespace voxcol::terrain {

// The shape's centre is buried in solid: the nearest way out along the six axes (distance to the
// surface plus the shape's reach behind its centre). False when the centre is not inside.
// On a chunk load error, sets *status and returns false.
bool BuriedEscape(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& s,
                  float* depth, Vec3* normal, absl::Status* status, QueryStats* stats);

}  // namespace voxcol::terrain
