#include "core/query/overlap.h"

#include <algorithm>

#include "core/query/buried_escape.h"
#include "core/query/triangle_contacts.h"
#include "core/query/water_contact.h"

namespace voxcol {

using terrain::Gathered;
using terrain::RawContact;

namespace {

// Adds the chunks whose water the shape reaches to the touched chunks (as water).
void AddWaterChunks(const std::vector<ChunkKey>& water_chunks, std::vector<TouchedChunk>* chunks) {
  for (const ChunkKey& key : water_chunks) {
    auto it = std::find_if(chunks->begin(), chunks->end(),
                           [&](const TouchedChunk& t) { return t.key == key; });
    if (it != chunks->end()) {
      it->classes |= kClassWater;
    } else {
      chunks->push_back({key, kClassWater});
    }
  }
}

}  // namespace

void OverlapResult::Clear() {
  touches_solid = touches_water = false;
  chunks.clear();
  penetration = {};
  load_status = absl::OkStatus();
}

void Overlap(const BroadphaseIndex& index, ChunkCollisionCache& cache, const PosedShape& shape,
             const OverlapSettings& settings, OverlapResult* result, QueryStats* stats) {
  result->Clear();
  terrain::ShapeQueryScratch& scratch = terrain::LocalScratch();
  Gathered& g = scratch.gathered;
  std::vector<RawContact>& contacts = scratch.contacts;
  g.Clear();
  g.interrupt = settings.interrupt;
  g.budget = settings.budget;
  // 1. Penetrating contacts with the triangles around the shape.
  const float h = index.world().voxel_size();
  const Aabb box = terrain::Grow(terrain::PosedBounds(shape), 1e-3f * h);
  g.reach = terrain::ContactReach(shape, 0.0f, h);
  if (absl::Status st = terrain::Gather(index, cache, box, false, &g, stats); !st.ok()) {
    result->load_status = st;
    return;
  }
  terrain::CollectContacts(shape, g, 0.0f, false, &contacts);
  if (stats) stats->triangles_tested += g.tests;
  if (!g.stopped.ok()) {
    result->load_status = g.stopped;
    return;
  }
  const RawContact* deepest = nullptr;
  for (const RawContact& c : contacts) {
    if (c.depth <= 0) continue;
    result->touches_solid = true;
    const ChunkKey key = g.tris[c.tri].chunk->key;
    if (result->chunks.empty() || result->chunks.back().key != key) {
      result->chunks.push_back({key, kClassSolid});
    }
    if (!deepest || c.depth > deepest->depth) deepest = &c;
  }
  if (deepest && settings.include_penetration) {
    result->penetration = {deepest->depth, deepest->normal, deepest->position};
  }
  // 2. No penetrating contact: the shape may still be buried with no surface within reach.
  if (!result->touches_solid) {
    Penetration buried;
    absl::Status st;
    if (terrain::BuriedEscape(index, cache, shape, &buried.depth, &buried.normal, &st, stats)) {
      result->touches_solid = true;
      result->chunks.push_back(
          {ChunkOf(index.world().VoxelAt(shape.pose.translation)), kClassSolid});
      buried.position = shape.pose.translation;
      if (settings.include_penetration) result->penetration = buried;
    }
    if (!st.ok()) {
      result->load_status = st;
      return;
    }
  }
  // 3. Water.
  WaterContact water;
  std::vector<ChunkKey> water_chunks;
  if (absl::Status st = IntegrateWater(index, shape, &water, &water_chunks); !st.ok()) {
    result->load_status = st;
    return;
  }
  result->touches_water = water.in_water;
  AddWaterChunks(water_chunks, &result->chunks);
  std::sort(result->chunks.begin(), result->chunks.end(),
            [](const TouchedChunk& a, const TouchedChunk& b) {
              return terrain::ChunkOrder(a.key, b.key);
            });
}

}  // namespace voxcol
