// Internal edges of the terrain mesh: a convex shape resting on flat ground touches several
// triangles, and where it overlaps one only near that triangle's edge the closest-feature normal
// would point sideways. A contact on an edge (or vertex) whose neighbouring triangle continues the
// surface flat or concave is not a real edge of the solid; such contacts take the triangle's face
// normal, as in Jolt's active edges and Bullet's btAdjustInternalEdgeContacts. Neighbours are found
// across chunk seams too, by the vertices' global fixed-point keys. Internal to core/query.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/query/terrain_triangles.h"

namespace voxcol::terrain {

// An edge whose two faces bend by less than this (cosine of ~5 degrees) is flat for contacts.
constexpr float kActiveEdgeCos = 0.996f;
// Barycentric weight below which a contact point counts as on an edge or vertex.
constexpr float kFeatureEpsilon = 1e-3f;

// Which edges of the gathered triangles are real edges of the solid (convex, bent by more than
// ~5 degrees) and which only split a flat or concave surface into triangles. Neighbours are the
// other gathered triangles sharing both vertex keys of the edge. A query usually gathers tens of
// triangles and asks about a few edges, so a scan finds them; past kIndexedTriangles the table
// indexes the (vertex key, triangle) pairs once, on the first question, and looks neighbours up
// there (a radius-40 sphere gathers ~10^5 triangles, and the scan made its contacts quadratic).
// The index buckets the pairs by the 2-voxel cell of their key (a counting sort) and sorts each
// bucket, so a look-up is a binary search in a few tens of pairs that stay in cache (one global
// sort of 10^6 pairs and searches across it took most of a radius-64 sphere's 150 ms), and the
// answers are memoized per edge and per vertex. Every way finds the same neighbours, and Active /
// VertexActive only ask whether any neighbour qualifies, so the answers are identical.
class EdgeTable {
 public:
  explicit EdgeTable(const std::vector<Tri>& tris) : tris_(tris) {}

  // Edge k of triangle i runs from corner k to corner k + 1.
  bool Active(uint32_t i, int k) const;

  // A vertex is a real corner of the solid when any edge that meets there is: a triangle can
  // touch a crease with one corner only, its own two edges both lying in the flat part.
  bool VertexActive(uint32_t i, int k) const;

 private:
  static constexpr size_t kIndexedTriangles = 64;
  // Corner `corner` of triangle `tri`, with 16-bit hashes of the triangle's next and previous
  // corner keys: Active rejects most candidates by them without loading the triangle.
  struct Corner {
    VertexKey key;
    uint32_t tri;
    uint8_t corner;
    uint16_t next_hash, prev_hash;
  };
  static uint16_t Hash16(const VertexKey& v) {
    return uint16_t(
        (uint32_t(v.x) * 0x9E3779B1u ^ uint32_t(v.y) * 0x85EBCA77u ^ uint32_t(v.z) * 0xC2B2AE3Du) >>
        16);
  }
  Corner CornerOf(uint32_t j, int c) const {
    const Tri& t = tris_[j];
    return {t.key[c], j, uint8_t(c), Hash16(t.key[(c + 1) % 3]), Hash16(t.key[(c + 2) % 3])};
  }

  // Bucket cells are 2^kCellShift fixed-point steps (2 voxels) wide. Past kMaxCellsPerCorner
  // cells per pair (a long diagonal sweep's sparse box) the index is one bucket.
  static constexpr int kCellShift = 13;
  static constexpr size_t kMaxCellsPerCorner = 4;

  static bool Has(const Tri& t, const VertexKey& v) {
    return t.key[0] == v || t.key[1] == v || t.key[2] == v;
  }
  // Calls visit(corner) for every corner of a gathered triangle at vertex key `v`, until it
  // returns true; returns whether it did.
  template <typename Visit>
  bool ForEachCornerAt(const VertexKey& v, Visit&& visit) const;
  // The neighbour test of Active for one candidate triangle j: 1 convex edge, 0 flat or concave
  // neighbour, -1 not a neighbour.
  int Neighbour(uint32_t i, int k, uint32_t j) const;
  // The memo byte of corner / edge k of triangle i past kIndexedTriangles (bits 0-1: Active,
  // bits 2-3: VertexActive; 0 unknown, 1 false, 2 true), else null. A large query asks about the
  // same edges from both sides and from every triangle around a vertex.
  uint8_t* Memo(uint32_t i, int k) const;
  // Fills corners_ and bucket_begin_ (first use past kIndexedTriangles).
  void BuildIndex() const;
  // The bucket of key `v`: its dense cell index, or -1 when no pair can be there.
  int64_t Bucket(const VertexKey& v) const;
  static bool KeyLess(const VertexKey& a, const VertexKey& b) {
    return a.x != b.x ? a.x < b.x : (a.y != b.y ? a.y < b.y : a.z < b.z);
  }

  const std::vector<Tri>& tris_;
  // Built on first use past kIndexedTriangles: the pairs grouped by bucket, each bucket sorted by
  // key; bucket b is corners_[bucket_begin_[b], bucket_begin_[b + 1]).
  mutable std::vector<Corner> corners_;
  mutable std::vector<uint32_t> bucket_begin_;
  mutable Int3 cell_min_, cell_count_;  // the dense box of cells the buckets cover
  mutable bool one_bucket_ = false;     // too sparse for cells: every pair in bucket 0
  mutable std::vector<uint8_t> memo_;   // see Memo
  // The triangles in the index: those gathered when it was built. Later ones (a sweep gathers box
  // after box) neither appear as neighbours nor are memoized, as before the memo.
  mutable uint32_t indexed_ = 0;
};

// Internal-edge handling: a normal off the face normal comes from an edge or vertex of the
// triangle; when that feature is not an active edge of the solid, the face normal replaces it
// (with the depth measured along it). Returns true when the contact changed.
bool FixInternalEdge(const PosedShape& s, const Tri& t, uint32_t tri_index, const EdgeTable& edges,
                     bool recompute_depth, RawContact* c);

template <typename Visit>
bool EdgeTable::ForEachCornerAt(const VertexKey& v, Visit&& visit) const {
  if (tris_.size() <= kIndexedTriangles) {
    for (uint32_t j = 0; j < tris_.size(); ++j) {
      for (int c = 0; c < 3; ++c) {
        if (tris_[j].key[c] == v && visit(CornerOf(j, c))) return true;
      }
    }
    return false;
  }
  if (corners_.empty()) BuildIndex();
  const int64_t b = Bucket(v);
  if (b < 0) return false;
  const auto first = corners_.begin() + bucket_begin_[size_t(b)];
  const auto last = corners_.begin() + bucket_begin_[size_t(b) + 1];
  auto it = std::lower_bound(first, last, v,
                             [](const Corner& a, const VertexKey& k) { return KeyLess(a.key, k); });
  for (; it != last && it->key == v; ++it) {
    if (visit(*it)) return true;
  }
  return false;
}

}  // namespace voxcol::terrain
