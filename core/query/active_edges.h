// Internal edges of the terrain mesh: a convex shape resting on flat ground touches several
// triangles, and where it overlaps one only near that triangle's edge the closest-feature normal
// would point sideways. A contact on an edge (or vertex) whose neighbouring triangle continues the
// surface flat or concave is not a real edge of the solid; such contacts take the triangle's face
// normal, as in Jolt's active edges and Bullet's btAdjustInternalEdgeContacts. Neighbours are found
// across chunk seams too, by the vertices' global fixed-point keys. Internal to core/query.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/mesh/mesh_edges.h"
#include "core/query/terrain_triangles.h"

namespace voxcol::terrain {

// Barycentric weight below which a contact point counts as on an edge or vertex.
constexpr float kFeatureEpsilon = 1e-3f;

// Which edges of the gathered triangles are real edges of the solid (convex, bent by more than
// ~5 degrees) and which only split a flat or concave surface into triangles.
//
// Most answers (~90% of edges and ~75% of corners in a cave world) come from the chunk mesh's own
// edge flags (core/mesh/mesh_edges.h), over every triangle of the chunk: an edge or corner off the
// chunk's seams has all of its neighbours there. The rest, on seams or of triangles without a
// chunk, look for neighbours among the other gathered triangles sharing both vertex keys of the
// edge, and a seam corner is active when any gathered edge there is. A query usually gathers tens
// of triangles and asks about a few edges, so a scan finds them; past kIndexedTriangles the table
// indexes the (vertex key, triangle) pairs of the unknown corners once, on the first question, and
// looks neighbours up there (a radius-40 sphere gathers ~10^5 triangles, and the scan made its
// contacts quadratic). The index buckets the pairs by a hash of the 1-voxel cell of their key (a
// counting sort), so a look-up scans a few pairs that stay in cache; answers are memoized per edge
// and per vertex, and VertexActive finds the neighbours across every edge at a vertex in its one
// look-up. The scan and the index find the same neighbours, and Active / VertexActive only ask
// whether any neighbour qualifies, so their answers are identical.
class EdgeTable {
 public:
  explicit EdgeTable(const std::vector<Tri>& tris) : tris_(tris) {}
  ~EdgeTable();
  EdgeTable(const EdgeTable&) = delete;
  EdgeTable& operator=(const EdgeTable&) = delete;

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

  // Pairs are bucketed by a hash of their key's cell, 2^kCellShift fixed-point steps (1 voxel)
  // wide, into a power of two of buckets, about kPairsPerBucket pairs each on average.
  static constexpr int kCellShift = 12;
  static constexpr size_t kPairsPerBucket = 4;
  // Buckets up to this many pairs (nearly all: a 1-voxel cell holds up to ~20) are scanned,
  // larger ones sorted by key and searched.
  static constexpr ptrdiff_t kScannedBucket = 64;

  // The edge flags of triangle i (0, nothing known, for a triangle without a chunk).
  uint16_t FlagsOf(uint32_t i) const {
    const Tri& t = tris_[i];
    return t.chunk != nullptr ? t.chunk->EdgeFlags()[t.index] : 0;
  }
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
  // Active(i, k) when `around` holds every corner at one end of the edge and far_hash is the
  // Hash16 of the other end's key: the same neighbours, without a second look-up.
  bool ActiveAround(uint32_t i, int k, uint16_t far_hash, const Corner* around, int count) const;
  static constexpr int kMaxAround = 32;  // corners at a vertex VertexActive gathers (~6 usual)
  // Fills the corners and bucket starts for every triangle gathered so far and clears the memo (new
  // triangles can be new neighbours). First use past kIndexedTriangles, and again after a sweep
  // gathered more.
  void BuildIndex() const;
  // The bucket of key `v`.
  size_t Bucket(const VertexKey& v) const;
  static bool KeyLess(const VertexKey& a, const VertexKey& b) {
    return a.x != b.x ? a.x < b.x : (a.y != b.y ? a.y < b.y : a.z < b.z);
  }

  // The index's storage. A radius-64 sphere's contacts index ~5 * 10^5 pairs (10 MB): fresh
  // vectors per query cost page faults and zero fills, so the buffers are taken from a per-thread
  // pool and given back (kept up to kKeptBufferBytes). `corners` only grows: the index uses its
  // first unknown.size() entries, each written before it is read.
  struct Buffers {
    std::vector<Corner> corners;
    std::vector<uint32_t> bucket_begin, next;
    std::vector<Corner> unknown;  // the indexed corners in triangle order, before the sort
    std::vector<uint8_t> memo;    // see Memo
  };
  static constexpr size_t kKeptBufferBytes = size_t(32) << 20;
  static std::unique_ptr<Buffers> AcquireBuffers();
  static void ReleaseBuffers(std::unique_ptr<Buffers> buffers);

  const std::vector<Tri>& tris_;
  // Built on first use past kIndexedTriangles: the pairs grouped by bucket, large buckets sorted
  // by key; bucket b is buf_->corners[bucket_begin[b], bucket_begin[b + 1]).
  mutable std::unique_ptr<Buffers> buf_;
  mutable size_t bucket_mask_ = 0;  // buckets - 1
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
  if (indexed_ != tris_.size()) BuildIndex();  // first use, or triangles gathered since
  const size_t b = Bucket(v);
  const auto first = buf_->corners.begin() + buf_->bucket_begin[b];
  const auto last = buf_->corners.begin() + buf_->bucket_begin[b + 1];
  if (last - first <= kScannedBucket) {
    for (auto it = first; it != last; ++it) {
      if (it->key == v && visit(*it)) return true;
    }
    return false;
  }
  auto it = std::lower_bound(first, last, v,
                             [](const Corner& a, const VertexKey& k) { return KeyLess(a.key, k); });
  for (; it != last && it->key == v; ++it) {
    if (visit(*it)) return true;
  }
  return false;
}

}  // namespace voxcol::terrain
