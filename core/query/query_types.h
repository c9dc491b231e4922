// Types every world query shares: cost statistics, hit collection modes and penetrations.
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/geometry/vec3.h"

namespace voxcol {

// What a query cost; optional output of every query.
struct QueryStats {
  uint32_t voxels_visited = 0;      // voxels stepped through inside chunks that were not skipped
  uint32_t chunks_visited = 0;      // chunks whose voxels (blocky) or trees (smooth) were visited
  uint32_t tree_nodes_visited = 0;  // smooth: kD-tree nodes
  uint32_t triangles_tested = 0;    // smooth: ray/triangle or shape/triangle tests
  uint32_t cache_builds = 0;        // smooth: chunk meshes + trees built by this query
};

// Which hits a sweep reports.
enum class HitCollection : uint8_t {
  kClosest,  // the first hit along the sweep
  kAny,      // some hit, the cheapest found (existence tests)
  kAll,      // every triangle hit, nearest first
};

// How far and which way the terrain pushes a penetrating shape out: move the shape by
// depth * normal. One type for every query that reports a penetration (Sweep's initial overlap,
// Overlap, a buried shape's Contacts).
struct Penetration {
  float depth = 0;  // world units, >= 0
  Vec3 normal;      // unit, from the terrain toward the shape
  Vec3 position;    // world units: the deepest point on the terrain side, or the shape's centre
                    // when it is buried with no surface within reach
};

// Default work budget of one shape query, in terrain triangles gathered (--max_query_triangles).
// On the benchmark cave world a radius-64 sphere's Contacts gathers ~1.7e5 on average; the largest
// shapes with the largest margin (half extent 64, margin 64: a reach of 128) gathered up to ~1.2e6
// (60 random positions each), and a query needs ~200 bytes of scratch per gathered triangle.
constexpr uint32_t kDefaultMaxQueryTriangles = 1000000;

// The most work one shape query (Sweep, Overlap, Contacts) may do: past it the query stops with
// RESOURCE_EXHAUSTED instead of answering.
struct QueryBudget {
  uint32_t max_triangles = kDefaultMaxQueryTriangles;  // terrain triangles gathered; 0: no limit

  // The error of a query that went past the budget; it names the budget and its flag.
  absl::Status Exceeded() const {
    return absl::ResourceExhaustedError(
        absl::StrCat("the query gathers more than ", max_triangles,
                     " terrain triangles, its work budget (--max_query_triangles=", max_triangles,
                     "); use a smaller shape, margin or sweep distance"));
  }
};

// Lets a long query stop early: shape queries check it between chunks and every few triangle
// tests, so the work ends within milliseconds of the deadline or the caller's cancellation.
struct QueryInterrupt {
  absl::Time deadline = absl::InfiniteFuture();
  const std::atomic<bool>* cancelled = nullptr;  // set by the caller to stop the query

  // DEADLINE_EXCEEDED or CANCELLED when the query must stop, else OK.
  absl::Status Check() const {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError("the query was cancelled");
    }
    if (deadline != absl::InfiniteFuture() && absl::Now() > deadline) {
      return absl::DeadlineExceededError("the query passed its deadline");
    }
    return absl::OkStatus();
  }
};

}  // namespace voxcol
