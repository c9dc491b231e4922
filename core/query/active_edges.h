// Internal edges of the terrain mesh: a convex shape resting on flat ground touches several
// triangles, and where it overlaps one only near that triangle's edge the closest-feature normal
// would point sideways. A contact on an edge (or vertex) whose neighbouring triangle continues the
// surface flat or concave is not a real edge of the solid; such contacts take the triangle's face
// normal, as in Jolt's active edges and Bullet's btAdjustInternalEdgeContacts. Neighbours are found
// across chunk seams too, by the vertices' global fixed-point keys. Internal to core/query.
#pragma once

#include <cstdint>
#include <vector>

#include "core/query/terrain_triangles.h"

namespace voxcol::terrain {

// An edge whose two faces bend by less than this (cosine of ~5 degrees) is flat for contacts.
constexpr float kActiveEdgeCos = 0.996f;
// Barycentric weight below which a contact point counts as on an edge or vertex.
constexpr float kFeatureEpsilon = 1e-3f;

// Which edges of the gathered triangles are real edges of the solid (convex, bent by more than
// ~5 degrees) and which only split a flat or concave surface into triangles. Neighbours are found
// by a scan over the gathered triangles' vertex keys: a query gathers tens of triangles and asks
// about a few edges, so a scan beats building a hash table.
class EdgeTable {
 public:
  explicit EdgeTable(const std::vector<Tri>& tris) : tris_(tris) {}

  // Edge k of triangle i runs from corner k to corner k + 1.
  bool Active(uint32_t i, int k) const {
    const Tri& t = tris_[i];
    const VertexKey &a = t.key[k], &b = t.key[(k + 1) % 3];
    bool any_neighbour = false;
    for (uint32_t j = 0; j < tris_.size(); ++j) {
      const Tri& u = tris_[j];
      if (j == i || !Has(u, a) || !Has(u, b)) continue;
      any_neighbour = true;
      if (Dot(t.normal, u.normal) >= kActiveEdgeCos) continue;  // flat
      // The neighbour lies behind this face for a convex edge, in front of it for a concave one.
      const Vec3 centroid = (u.v[0] + u.v[1] + u.v[2]) * (1.0f / 3.0f);
      if (Dot(centroid - t.v[k], t.normal) < 0) return true;  // convex
    }
    // No neighbour: the surface ends here (world border), which is a real edge.
    return !any_neighbour;
  }

  // A vertex is a real corner of the solid when any edge that meets there is: a triangle can
  // touch a crease with one corner only, its own two edges both lying in the flat part.
  bool VertexActive(uint32_t i, int k) const {
    const VertexKey& v = tris_[i].key[k];
    for (uint32_t j = 0; j < tris_.size(); ++j) {
      const Tri& u = tris_[j];
      for (int c = 0; c < 3; ++c) {
        if (u.key[c] == v && (Active(j, c) || Active(j, (c + 2) % 3))) return true;
      }
    }
    return false;
  }

 private:
  static bool Has(const Tri& t, const VertexKey& v) {
    return t.key[0] == v || t.key[1] == v || t.key[2] == v;
  }

  const std::vector<Tri>& tris_;
};

// Internal-edge handling: a normal off the face normal comes from an edge or vertex of the
// triangle; when that feature is not an active edge of the solid, the face normal replaces it
// (with the depth measured along it). Returns true when the contact changed.
bool FixInternalEdge(const PosedShape& s, const Tri& t, uint32_t tri_index, const EdgeTable& edges,
                     bool recompute_depth, RawContact* c);

}  // namespace voxcol::terrain
