// Edit primitives: shapes written into the voxel grid with smooth (coverage-based) occupancy.
//
// Every primitive is described by a signed distance function in world units (negative inside). A
// voxel whose centre is farther than half its diagonal from the surface is fully inside or fully
// outside; a boundary voxel gets the fraction of an N^3 grid of sample points that falls inside the
// shape, so the occupancy sum tracks the analytic volume instead of a staircase.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "core/geometry/vec3.h"
#include "core/voxel/world.h"

namespace voxcol {

// How a primitive's coverage c (0..1) combines with an existing voxel (material m, occupancy o).
enum class EditMode {
  // Union: o' = max(o, c). The voxel takes the new material where c >= o. Material air carves
  // (acts as kSubtract).
  kAdd,
  // Carve: o' = min(o, 1 - c); a voxel emptied completely becomes air. The material is ignored.
  kSubtract,
  // Overwrite where the shape reaches (c > 0): o' = c, material' = the new material.
  kSet,
};

// Server-side limits on edits, configured by flags.
struct EditLimits {
  float max_radius = 64.0f;   // world units; larger balls/cylinders are rejected
  float max_extent = 128.0f;  // world units; longest block/wedge edge or cylinder height
  // Most voxels one region may span (FillRegion, ReplaceMaterial, Clear, ReadVoxels,
  // WriteVoxels); 4,194,304 = 2^22 like Roblox's ReadVoxels/WriteVoxels limit.
  int64_t max_region_voxels = 4194304;
  int max_batch_primitives = 256;  // primitives in one edit batch
};

struct FillBallParams {
  Vec3 center;       // world units
  float radius = 0;  // world units, > 0
  uint8_t material = kMaterialRock;
  EditMode mode = EditMode::kAdd;
};

// Checks a FillBall against the world and limits; the message names the field.
absl::Status ValidateFillBall(const World& world, const FillBallParams& params,
                              const EditLimits& limits);

// Writes a ball. Validates first and changes nothing on error. Voxels outside the world are
// skipped.
absl::Status FillBall(ChunkEdit& edit, const FillBallParams& params, const EditLimits& limits);

// Samples per axis used to estimate the coverage of a boundary voxel (N^3 points in all).
constexpr int kCoverageSamples = 5;

// Combines one coverage value into a voxel according to `mode`.
Voxel CombineCoverage(Voxel current, float coverage, uint8_t material, EditMode mode);

// Writes a shape given by `sdf` (world units, negative inside; it must never overestimate the
// distance to the surface) over the voxels overlapping `bounds` (world units), clipped to the
// world.
template <typename Sdf>
void ApplyShape(ChunkEdit& edit, const Aabb& bounds, const Sdf& sdf, uint8_t material,
                EditMode mode) {
  const World& world = edit.world();
  const float h = world.voxel_size();
  const float half_diagonal = 0.8660254f * h;
  IntBox box{world.VoxelAt(bounds.min), world.VoxelAt(bounds.max) + Int3{1, 1, 1}};
  box = box.Intersect(world.voxel_bounds());
  for (int32_t y = box.min.y; y < box.max.y; ++y)
    for (int32_t z = box.min.z; z < box.max.z; ++z)
      for (int32_t x = box.min.x; x < box.max.x; ++x) {
        Int3 v{x, y, z};
        Vec3 c = world.VoxelCenter(v);
        float d = sdf(c);
        if (d >= half_diagonal) continue;
        float coverage = 1.0f;
        if (d > -half_diagonal) {
          int inside = 0;
          for (int k = 0; k < kCoverageSamples; ++k)
            for (int j = 0; j < kCoverageSamples; ++j)
              for (int i = 0; i < kCoverageSamples; ++i) {
                Vec3 p = c + Vec3((i + 0.5f) / kCoverageSamples - 0.5f,
                                  (j + 0.5f) / kCoverageSamples - 0.5f,
                                  (k + 0.5f) / kCoverageSamples - 0.5f) *
                                 h;
                inside += sdf(p) < 0.0f;
              }
          if (inside == 0) continue;
          coverage = float(inside) / float(kCoverageSamples * kCoverageSamples * kCoverageSamples);
        }
        Voxel before = edit.Get(v);
        Voxel after = CombineCoverage(before, coverage, material, mode);
        if (after != before) edit.Set(v, after);
      }
}

}  // namespace voxcol
