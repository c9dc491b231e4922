#include "core/query/contacts.h"

#include "core/query/buried_escape.h"
#include "core/query/triangle_contacts.h"

namespace voxcol {

using terrain::Gathered;
using terrain::RawContact;
using terrain::Tri;

namespace {

// Reduces the contacts of one chunk, contacts[begin, end), to at most four spanning the largest
// area, into `out`.
void ReduceChunk(const Gathered& g, const std::vector<RawContact>& contacts, size_t begin,
                 size_t end, std::vector<ManifoldPoint>* points, ChunkContacts* out) {
  size_t deepest = begin;
  points->clear();
  for (size_t i = begin; i < end; ++i) {
    const RawContact& c = contacts[i];
    points->push_back({c.position, c.normal, c.depth});
    if (c.depth > contacts[deepest].depth) deepest = i;
  }
  int kept[kMaxManifoldPoints];
  const int n =
      ReduceContactIndices(points->data(), int(points->size()), contacts[deepest].normal, kept);
  out->chunk = g.tris[contacts[begin].tri].chunk->key;
  for (int i = 0; i < n; ++i) {
    const RawContact& c = contacts[begin + size_t(kept[i])];
    const Tri& t = g.tris[c.tri];
    out->points[out->count++] = {c.position, c.normal, c.depth, t.chunk->mesh.Material(t.index),
                                 int32_t(t.index)};
  }
}

}  // namespace

void ContactsResult::Clear() {
  chunks.clear();
  buried = false;
  penetration = {};
  water = {};
  load_status = absl::OkStatus();
}

int ContactsResult::total_points() const {
  int n = 0;
  for (const ChunkContacts& m : chunks) n += m.count;
  return n;
}

void Contacts(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& shape,
              const ContactsSettings& settings, ContactsResult* result, QueryStats* stats) {
  result->Clear();
  terrain::ShapeQueryScratch& sc = terrain::LocalScratch();
  thread_local std::vector<ManifoldPoint> points;
  Gathered& g = sc.gathered;
  g.Clear();
  g.interrupt = settings.interrupt;
  g.budget = settings.budget;
  // 1. Triangles within the margin of the shape's bounds, and their contacts.
  const float h = index.world().voxel_size();
  const Aabb box = terrain::Grow(terrain::PosedBounds(shape), settings.margin + 1e-3f * h);
  g.reach = terrain::ContactReach(shape, settings.margin, h);
  if (absl::Status st = terrain::Gather(index, cache, box, false, &g, stats); !st.ok()) {
    result->load_status = st;
    return;
  }
  terrain::CollectContacts(shape, g, settings.margin, true, &sc.contacts);
  if (stats) stats->triangles_tested += g.tests;
  if (!g.stopped.ok()) {
    result->load_status = g.stopped;
    return;
  }
  // 2. Tris (and so contacts) come chunk by chunk in Y, Z, X order: reduce each run.
  for (size_t begin = 0, end = 0; begin < sc.contacts.size(); begin = end) {
    const ChunkCollision* chunk = g.tris[sc.contacts[begin].tri].chunk;
    for (end = begin; end < sc.contacts.size() && g.tris[sc.contacts[end].tri].chunk == chunk;) {
      ++end;
    }
    ReduceChunk(g, sc.contacts, begin, end, &points, &result->chunks.emplace_back());
  }
  // 3. No contact at all: the shape may be buried with no surface within reach.
  if (sc.contacts.empty()) {
    absl::Status st;
    result->buried = terrain::BuriedEscape(index, cache, shape, &result->penetration.depth,
                                           &result->penetration.normal, &st, stats);
    result->penetration.position = shape.pose.translation;
    if (!result->buried) result->penetration = {};
    if (!st.ok()) {
      result->load_status = st;
      return;
    }
  }
  // 4. Buoyancy.
  if (settings.water) {
    if (absl::Status st = IntegrateWater(index, shape, &result->water, nullptr); !st.ok()) {
      result->load_status = st;
    }
  }
}

}  // namespace voxcol
