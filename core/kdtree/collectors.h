// Hit collectors for kD-tree queries (and the world raycast built on them), after Jolt Physics:
// one traversal serves closest, any and all hits; the collector's early-out distance flows back
// into the traversal, which skips every node and triangle beyond it.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace voxcol {

// One ray/triangle hit: t in multiples of the ray direction, triangle index in its chunk mesh.
struct TriangleRayHit {
  float t = 0;
  uint32_t triangle = 0;
};

// Keeps the nearest hit. Early-out distance: the best t so far.
class ClosestHitCollector {
 public:
  explicit ClosestHitCollector(float max_t) : early_out_(max_t) {}
  float early_out() const { return early_out_; }
  void AddHit(const TriangleRayHit& hit) {
    if (hit.t < early_out_ || !has_hit_) {
      hit_ = hit;
      early_out_ = hit.t;
      has_hit_ = true;
    }
  }
  bool has_hit() const { return has_hit_; }
  const TriangleRayHit& hit() const { return hit_; }

 private:
  float early_out_;
  bool has_hit_ = false;
  TriangleRayHit hit_;
};

// Stops at the first hit found (not necessarily the nearest): line-of-sight checks.
class AnyHitCollector {
 public:
  explicit AnyHitCollector(float max_t) : early_out_(max_t) {}
  float early_out() const { return early_out_; }
  void AddHit(const TriangleRayHit& hit) {
    hit_ = hit;
    has_hit_ = true;
    early_out_ = -std::numeric_limits<float>::infinity();
  }
  bool has_hit() const { return has_hit_; }
  const TriangleRayHit& hit() const { return hit_; }

 private:
  float early_out_;
  bool has_hit_ = false;
  TriangleRayHit hit_;
};

// Collects every hit up to max_t, unordered. `hits` is appended to, never cleared.
class AllHitsCollector {
 public:
  AllHitsCollector(float max_t, std::vector<TriangleRayHit>* hits)
      : early_out_(max_t), hits_(hits) {}
  float early_out() const { return early_out_; }
  void AddHit(const TriangleRayHit& hit) { hits_->push_back(hit); }

 private:
  float early_out_;
  std::vector<TriangleRayHit>* hits_;
};

// AABB queries: collects the indices of the triangles found.
class AllTrianglesCollector {
 public:
  explicit AllTrianglesCollector(std::vector<uint32_t>* out) : out_(out) {}
  bool done() const { return false; }
  void AddTriangle(uint32_t tri) { out_->push_back(tri); }

 private:
  std::vector<uint32_t>* out_;
};

}  // namespace voxcol
