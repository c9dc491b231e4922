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
// sorts (vertex key, triangle) pairs once, on the first question, and looks neighbours up there
// (a radius-40 sphere gathers ~10^5 triangles, and the scan made its contacts quadratic). Both
// ways find the same neighbours, so the answers are identical.
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
  struct Corner {
    VertexKey key;
    uint32_t tri;
    int corner;
  };

  static bool Has(const Tri& t, const VertexKey& v) {
    return t.key[0] == v || t.key[1] == v || t.key[2] == v;
  }
  // Calls visit(j, c) for every corner c of a gathered triangle j at vertex key `v`, until it
  // returns true; returns whether it did.
  template <typename Visit>
  bool ForEachCornerAt(const VertexKey& v, Visit&& visit) const;
  // The neighbour test of Active for one candidate triangle j: 1 convex edge, 0 flat or concave
  // neighbour, -1 not a neighbour.
  int Neighbour(uint32_t i, int k, uint32_t j) const;

  const std::vector<Tri>& tris_;
  mutable std::vector<Corner> corners_;  // sorted by key; built on first use past kIndexed...
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
        if (tris_[j].key[c] == v && visit(j, c)) return true;
      }
    }
    return false;
  }
  auto less = [](const Corner& a, const VertexKey& b) {
    return a.key.x != b.x ? a.key.x < b.x : (a.key.y != b.y ? a.key.y < b.y : a.key.z < b.z);
  };
  if (corners_.empty()) {
    corners_.reserve(tris_.size() * 3);
    for (uint32_t j = 0; j < tris_.size(); ++j) {
      for (int c = 0; c < 3; ++c) corners_.push_back({tris_[j].key[c], j, c});
    }
    std::sort(corners_.begin(), corners_.end(), [&](const Corner& a, const Corner& b) {
      return less(a, b.key) ||
             (a.key == b.key && (a.tri < b.tri || (a.tri == b.tri && a.corner < b.corner)));
    });
  }
  for (auto it = std::lower_bound(corners_.begin(), corners_.end(), v, less);
       it != corners_.end() && it->key == v; ++it) {
    if (visit(it->tri, it->corner)) return true;
  }
  return false;
}

}  // namespace voxcol::terrain
