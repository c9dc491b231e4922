// Overlap: the exact test of a posed convex shape against the terrain's smooth surface and the
// water volume. (The conservative box / sphere test from the broadphase masks is Probe,
// core/broadphase/probe.h.)
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/broadphase_index.h"
#include "core/broadphase/probe.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/narrowphase/support.h"
#include "core/query/query_types.h"

namespace voxcol {

struct OverlapSettings {
  bool include_penetration = false;  // fill OverlapResult::penetration
  // Optional: stops the query early (result status DEADLINE_EXCEEDED or CANCELLED).
  const QueryInterrupt* interrupt = nullptr;
  QueryBudget budget;  // past it: result status RESOURCE_EXHAUSTED
};

struct OverlapResult {
  bool touches_solid = false;        // the shape penetrates (or is buried in) the solid
  bool touches_water = false;        // part of its volume is under water
  std::vector<TouchedChunk> chunks;  // chunks with a touch (classes kClassSolid / kClassWater)
  // With include_penetration, when touches_solid: the deepest penetration.
  Penetration penetration;
  absl::Status load_status;  // as SweepResult::load_status

  void Clear();
};

// Exact overlap of a posed shape with the terrain. Precondition: ValidateOverlap (validate.h) is
// OK.
void Overlap(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& shape,
             const OverlapSettings& settings, OverlapResult* result, QueryStats* stats = nullptr);

}  // namespace voxcol
