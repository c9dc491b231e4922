#include "core/query/sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "core/narrowphase/cast_vs_triangle.h"
#include "core/narrowphase/gjk_raycast.h"
#include "core/query/active_edges.h"
#include "core/query/buried_escape.h"
#include "core/query/triangle_contacts.h"

namespace voxcol {

using terrain::Gathered;
using terrain::kInterruptStride;
using terrain::RawContact;
using terrain::Tri;

namespace {

// One sweep in progress: the gathered triangles, the best hit so far and the collection rules.
class SweepRun {
 public:
  SweepRun(const BroadphaseIndex& index, ChunkCollisionCache& cache, const SweepInput& input,
           const SweepSettings& settings, SweepResult* result, QueryStats* stats)
      : index_(index),
        cache_(cache),
        s_(input.shape),
        dir_(Normalize(input.direction)),
        length_(input.distance),
        translation_(dir_ * length_),
        h_(index.world().voxel_size()),
        settings_(settings),
        result_(result),
        stats_(stats) {
    g_.Clear();
    g_.interrupt = settings.interrupt;
    g_.budget = settings.budget;
    touching_.clear();
  }
  ~SweepRun() {
    if (stats_) stats_->triangles_tested += g_.tests;
  }

  // The start pose: penetrating deeper than the tolerance is an initial overlap; touching
  // triangles block only motion into them. Returns true when the sweep is decided.
  bool StartPose();
  // Casts against the triangles along the way, one box of at most a chunk's length at a time.
  void CastAlongPath();

 private:
  SweepHit MakeHit(const Tri& t, float distance, const Vec3& position, const Vec3& normal) const;
  void Add(const SweepHit& hit);
  bool GatherBox(float t0, float t1);
  // Casts the shape against gathered triangle `i`; true when a kAny sweep is done.
  bool CastTriangle(uint32_t i, const terrain::EdgeTable& edges);
  // Whether the motion up to min(length_, best_) keeps the shape off the plane of `t` (which it
  // runs toward) by more than slack_: it ends wholly in front of the plane, or starts wholly behind
  // it. Then the triangle is not hit, or only later than the closest hit so far.
  bool StaysOffPlane(const Tri& t) const;
  void SortAll();

  const BroadphaseIndex& index_;
  ChunkCollisionCache& cache_;
  const PosedShape& s_;
  const Vec3 dir_;
  const float length_;
  const Vec3 translation_;  // the whole motion
  const float h_;
  // A sphere's or capsule's core at the start.
  const terrain::RoundCore core_{s_};
  // A plane this far from the swept shape is certainly not reached (the motion's end is at most
  // length_ farther from the origin).
  const float slack_ = terrain::PlaneSlack(h_, core_.magnitude + length_);
  const SweepSettings& settings_;
  SweepResult* result_;
  QueryStats* stats_;
  float best_ = std::numeric_limits<float>::infinity();
  // Thread-local buffers: queries run on worker threads and must not allocate in steady state.
  Gathered& g_ = terrain::LocalScratch().gathered;
  std::vector<RawContact>& contacts_ = terrain::LocalScratch().contacts;
  // Gathered triangles handled by the start contacts.
  static thread_local absl::flat_hash_set<uint32_t> touching_;
};

thread_local absl::flat_hash_set<uint32_t> SweepRun::touching_;

SweepHit SweepRun::MakeHit(const Tri& t, float distance, const Vec3& position,
                           const Vec3& normal) const {
  SweepHit hit;
  hit.distance = distance;
  hit.position = position;
  hit.normal = normal;
  hit.material = t.chunk->mesh.Material(t.index);
  hit.chunk = t.chunk->key;
  hit.triangle = int32_t(t.index);
  return hit;
}

void SweepRun::Add(const SweepHit& hit) {
  if (settings_.collection == HitCollection::kAll) {
    result_->hits.push_back(hit);
  } else if (hit.distance < best_) {
    best_ = hit.distance;
    result_->first = hit;
  }
  result_->hit = true;
}

bool SweepRun::StartPose() {
  const Aabb start_box = terrain::Grow(terrain::PosedBounds(s_), 1e-3f * h_);
  if (absl::Status st = terrain::Gather(index_, cache_, start_box, true, &g_, stats_); !st.ok()) {
    result_->load_status = st;
    return true;
  }
  terrain::CollectContacts(s_, g_, 1e-4f * h_, false, &contacts_);
  if (!g_.stopped.ok()) {
    result_->load_status = g_.stopped;
    return true;
  }
  const RawContact* deepest = nullptr;
  for (const RawContact& c : contacts_) {
    if (!deepest || c.depth > deepest->depth) deepest = &c;
  }
  const bool all = settings_.collection == HitCollection::kAll;
  if (deepest && deepest->depth > settings_.overlap_tolerance) {
    result_->hit = result_->initial_overlap = true;
    result_->penetration = {deepest->depth, deepest->normal, deepest->position};
    result_->first = MakeHit(g_.tris[deepest->tri], 0, deepest->position, deepest->normal);
    if (all) result_->hits.push_back(result_->first);
    return true;
  }
  if (!deepest) {
    Penetration& p = result_->penetration;
    absl::Status st;
    if (terrain::BuriedEscape(index_, cache_, s_, &p.depth, &p.normal, &st, stats_)) {
      result_->hit = result_->initial_overlap = true;
      p.position = s_.pose.translation;
      result_->first.normal = p.normal;
      result_->first.position = p.position;
      result_->first.chunk = ChunkOf(index_.world().VoxelAt(s_.pose.translation));
      if (all) result_->hits.push_back(result_->first);
      return true;
    }
    result_->penetration = {};
    if (!st.ok()) {
      result_->load_status = st;
      return true;
    }
  }
  // Touching contacts the motion pushes into stop it at once.
  for (const RawContact& c : contacts_) {
    touching_.insert(c.tri);
    if (Dot(c.normal, dir_) < -1e-4f) Add(MakeHit(g_.tris[c.tri], 0, c.position, c.normal));
  }
  return result_->hit && !all;
}

bool SweepRun::GatherBox(float t0, float t1) {
  PosedShape a = s_, b = s_;
  a.pose.translation = s_.pose.translation + dir_ * t0;
  b.pose.translation = s_.pose.translation + dir_ * t1;
  const Aabb box =
      terrain::Grow(terrain::Union(terrain::PosedBounds(a), terrain::PosedBounds(b)), 1e-3f * h_);
  if (absl::Status st = terrain::Gather(index_, cache_, box, true, &g_, stats_); !st.ok()) {
    result_->load_status = st;
    return false;
  }
  return true;
}

bool SweepRun::StaysOffPlane(const Tri& t) const {
  const Vec3& n = t.normal;
  const float plane = Dot(n, t.v[0]);
  // The shape's extent along n at the start, [lo, hi]: a sphere's or capsule's from its core
  // segment (no rotation per triangle), any other shape's from its supports.
  float lo, hi;
  if (core_.round) {
    core_.Along(n, &lo, &hi);
  } else {
    lo = Dot(n, s_.Support(-n)), hi = Dot(n, s_.Support(n));
  }
  // The motion runs against the normal, so the shape comes nearest the plane at its end: the end
  // of the sweep, or the closest hit so far (a later hit would not be kept; best_ stays infinite
  // when all hits are collected).
  const float end_gap = lo + Dot(n, dir_) * std::min(length_, best_) - plane;
  const float start_behind = plane - hi;
  return end_gap > slack_ || start_behind > slack_;
}

bool SweepRun::CastTriangle(uint32_t i, const terrain::EdgeTable& edges) {
  const Tri& t = g_.tris[i];
  // One-sided: only faces the motion runs into can stop it.
  if (Dot(dir_, t.normal) >= 0 || touching_.contains(i)) return false;
  ++g_.tests;
  if (StaysOffPlane(t)) return false;
  CastResult r;
  switch (s_.shape->type) {
    case ShapeType::kSphere:
      r = CastSphereVsTriangle(s_.pose.translation, s_.Radius(), translation_, t.v[0], t.v[1],
                               t.v[2]);
      break;
    case ShapeType::kCapsule:
      r = CastCapsuleVsTriangle(core_.p[0], core_.p[1], core_.radius, translation_, t.v[0], t.v[1],
                                t.v[2]);
      break;
    default:
      r = CastConvexVsTriangle(s_, translation_, t.v[0], t.v[1], t.v[2]);
      break;
  }
  if (!r.hit) return false;
  if (r.initially_overlapping) {
    RawContact c;
    if (!terrain::ContactWithTriangle(s_, core_, t, 1e-4f * h_, &c) ||
        Dot(c.normal, dir_) >= -1e-4f) {
      return false;
    }
    Add(MakeHit(t, 0, c.position, c.normal));
  } else {
    if (Dot(r.normal, t.normal) < 0) return false;  // reached from behind: leaving the solid
    RawContact c{r.point, r.normal, 0, i};
    terrain::FixInternalEdge(s_, t, i, edges, false, &c);
    Add(MakeHit(t, r.fraction * length_, c.position, c.normal));
  }
  return settings_.collection == HitCollection::kAny;
}

void SweepRun::CastAlongPath() {
  terrain::EdgeTable edges(g_.tris);
  const float step = kChunkSize * h_;
  const int steps = std::max(1, int(std::ceil(length_ / step)));
  uint32_t next = 0;  // first gathered triangle not yet cast
  for (int k = 0; k < steps; ++k) {
    const float t0 = k * step, t1 = std::min(length_, (k + 1) * step);
    if (!GatherBox(t0, t1)) return;
    for (; next < g_.tris.size(); ++next) {
      if (next % kInterruptStride == 0 && g_.Interrupted()) {
        result_->load_status = g_.stopped;
        return;
      }
      if (CastTriangle(next, edges)) return;
    }
    // Everything that can be hit before t1 has been gathered by now.
    if (settings_.collection == HitCollection::kClosest && best_ <= t1) break;
  }
  SortAll();
}

void SweepRun::SortAll() {
  std::vector<SweepHit>& hits = result_->hits;
  if (settings_.collection != HitCollection::kAll || hits.empty()) return;
  std::sort(hits.begin(), hits.end(),
            [](const SweepHit& a, const SweepHit& b) { return a.distance < b.distance; });
  if (hits.size() > settings_.max_hits) {
    hits.resize(settings_.max_hits);
    result_->hits_truncated = true;
  }
  result_->first = hits.front();
}

}  // namespace

void SweepResult::Clear() {
  hit = initial_overlap = hits_truncated = false;
  penetration = {};
  first = {};
  hits.clear();
  load_status = absl::OkStatus();
}

void Sweep(const BroadphaseIndex& index, ChunkCollisionCache& cache, const SweepInput& input,
           const SweepSettings& settings, SweepResult* result, QueryStats* stats) {
  result->Clear();
  SweepRun run(index, cache, input, settings, result, stats);
  if (run.StartPose()) return;
  run.CastAlongPath();
}

}  // namespace voxcol
