#include "core/query/active_edges.h"

namespace voxcol::terrain {

int EdgeTable::Neighbour(uint32_t i, int k, uint32_t j) const {
  const Tri& t = tris_[i];
  const Tri& u = tris_[j];
  if (j == i || !Has(u, t.key[k]) || !Has(u, t.key[(k + 1) % 3])) return -1;
  if (Dot(t.normal, u.normal) >= kActiveEdgeCos) return 0;  // flat
  // The neighbour lies behind this face for a convex edge, in front of it for a concave one.
  const Vec3 centroid = (u.v[0] + u.v[1] + u.v[2]) * (1.0f / 3.0f);
  return Dot(centroid - t.v[k], t.normal) < 0 ? 1 : 0;
}

bool EdgeTable::Active(uint32_t i, int k) const {
  bool any_neighbour = false;
  // Every neighbour has a corner at the edge's first vertex.
  const bool convex = ForEachCornerAt(tris_[i].key[k], [&](uint32_t j, int) {
    const int n = Neighbour(i, k, j);
    any_neighbour |= n >= 0;
    return n == 1;
  });
  // No neighbour: the surface ends here (world border), which is a real edge.
  return convex || !any_neighbour;
}

bool EdgeTable::VertexActive(uint32_t i, int k) const {
  return ForEachCornerAt(tris_[i].key[k],
                         [&](uint32_t j, int c) { return Active(j, c) || Active(j, (c + 2) % 3); });
}

bool FixInternalEdge(const PosedShape& s, const Tri& t, uint32_t tri_index, const EdgeTable& edges,
                     bool recompute_depth, RawContact* c) {
  if (Dot(c->normal, t.normal) >= 0.99995f) return false;  // already the face normal (~0.6 deg)
  // Barycentric coordinates of the contact point.
  const Vec3 e1 = t.v[1] - t.v[0], e2 = t.v[2] - t.v[0], p = c->position - t.v[0];
  const Vec3 n = Cross(e1, e2);
  const float inv = 1.0f / LengthSq(n);
  const float w1 = Dot(Cross(p, e2), n) * inv, w2 = Dot(Cross(e1, p), n) * inv;
  const float w[3] = {1.0f - w1 - w2, w1, w2};
  int small = 0, mask = 0;
  for (int k = 0; k < 3; ++k) {
    if (w[k] < kFeatureEpsilon) ++small, mask |= 1 << k;
  }
  bool active;
  if (small == 0) {
    active = false;  // a face point: its normal is the face normal
  } else if (small == 1) {
    // On the edge opposite the small corner: corners k+1, k+2, i.e. edge (k + 1) % 3.
    int opposite = mask == 1 ? 0 : (mask == 2 ? 1 : 2);
    active = edges.Active(tri_index, (opposite + 1) % 3);
  } else {
    // At a vertex: the corner whose weight is not small.
    int v = (mask & 1) == 0 ? 0 : ((mask & 2) == 0 ? 1 : 2);
    active = edges.VertexActive(tri_index, v);
  }
  if (active) return false;
  c->normal = t.normal;
  if (recompute_depth) c->depth = PlaneDepth(s, t);
  return true;
}

}  // namespace voxcol::terrain
