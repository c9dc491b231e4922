// Input checks shared by the edit primitives. Every error is INVALID_ARGUMENT and its message
// starts with the field name it was given, so callers can prefix a path
// ("primitives[2].fill_block.").
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/geometry/vec3.h"
#include "core/voxel/edit.h"
#include "core/voxel/world.h"

namespace voxcol {

// `p` (world units) must be finite and inside the world bounds.
absl::Status ValidatePointInWorld(const World& world, const Vec3& p, absl::string_view field);

// `value` (world units) must be finite, > 0 and <= `max`.
absl::Status ValidateLength(float value, float max, absl::string_view field);

// Every component of `size` (world units) must be finite, > 0 and <= `max`.
absl::Status ValidateSize(const Vec3& size, float max, absl::string_view field);

// `q` must be finite and of unit length within 1e-3 (a zero quaternion is rejected).
absl::Status ValidateRotation(const Quat& q, absl::string_view field);

// `region` (voxel indices, max exclusive) must be non-empty, inside the world and span at most
// limits.max_region_voxels voxels.
absl::Status ValidateRegion(const World& world, const IntBox& region, const EditLimits& limits,
                            absl::string_view field);

// `q` scaled to unit length. Precondition: ValidateRotation(q) is OK.
Quat NormalizedRotation(const Quat& q);

}  // namespace voxcol
